/**
 * Waiting for the server instead of failing: a command issued while the server starts (the first
 * seconds after a folder opens) must run once it is up, never answer "not running". The gate
 * holds the connection once there is one; `wait()` hands it out at once, queues while the server
 * starts, and rejects with the reason once a start has failed. Pure (no VS Code), so unit-tested.
 */

export type GateState = "stopped" | "starting" | "ready" | "failed";

interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (error: Error) => void;
}

export class StartGate<T> {
  private current: GateState = "stopped";
  private value?: T;
  private reason = "";
  private waiters: Waiter<T>[] = [];

  /** `kick`: starts the server (called when someone waits on a stopped one). */
  constructor(private readonly kick: () => void = () => undefined) {}

  get state(): GateState {
    return this.current;
  }

  /** A start is under way: waiters queue until `ready` or `failed`. */
  starting(): void {
    this.current = "starting";
    this.value = undefined;
  }

  ready(value: T): void {
    this.current = "ready";
    this.value = value;
    this.reason = "";
    for (const w of this.take()) w.resolve(value);
  }

  /** The start failed (or the server failed to come up): every waiter gets the reason. */
  failed(reason: string): void {
    this.current = "failed";
    this.value = undefined;
    this.reason = reason;
    for (const w of this.take()) w.reject(new Error(reason));
  }

  /** The server went away: the waiters get `reason`; the next `wait()` starts it again. */
  stopped(reason: string): void {
    this.current = "stopped";
    this.value = undefined;
    for (const w of this.take()) w.reject(new Error(reason));
  }

  /** The connection: now, once the start under way ends, or after starting a stopped server. */
  wait(): Promise<T> {
    if (this.current === "ready") return Promise.resolve(this.value as T);
    if (this.current === "failed") return Promise.reject(new Error(this.reason));
    const waiting = new Promise<T>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (this.current === "stopped") this.kick();
    return waiting;
  }

  private take(): Waiter<T>[] {
    const waiters = this.waiters;
    this.waiters = [];
    return waiters;
  }
}
