"""The standing attack suite: each finding of the security review, and variants of its class,
as a test that fails on the code before the fix. Fixtures shared by several files live here."""
