"""The command sandbox: bubblewrap where it works, a supervisor where it does not.

- :mod:`~lsp_agent.sandbox.availability`: whether bubblewrap works here, and why not;
- :mod:`~lsp_agent.sandbox.policy`: what one command may write, read and not see;
- :mod:`~lsp_agent.sandbox.bwrap`: the ``bwrap`` command line for a policy;
- :mod:`~lsp_agent.sandbox.supervisor`: the subreaper that ends what an unsandboxed command
  left behind (a standalone script);
- :mod:`~lsp_agent.sandbox.root_only`: what only root may read, masked when the agent is root;
- :mod:`~lsp_agent.sandbox.limits`, :mod:`~lsp_agent.sandbox.cgroup`: what one command may
  take (processes, memory, in-memory files, output);
- :mod:`~lsp_agent.sandbox.launch`: the configured mode applied to one command;
- :mod:`~lsp_agent.sandbox.undumpable`: the agent's own process made unreadable to commands.

``docs/security.md`` says what each wall holds and how it is tested.
"""

from lsp_agent.sandbox.availability import Availability, availability, check_availability
from lsp_agent.sandbox.launch import CommandSandbox, Launch, SandboxMode, SandboxUnavailable
from lsp_agent.sandbox.limits import CommandLimits
from lsp_agent.sandbox.undumpable import forbid_inspection, inspection_forbidden

__all__ = [
    "Availability",
    "CommandLimits",
    "CommandSandbox",
    "Launch",
    "SandboxMode",
    "SandboxUnavailable",
    "availability",
    "check_availability",
    "forbid_inspection",
    "inspection_forbidden",
]
