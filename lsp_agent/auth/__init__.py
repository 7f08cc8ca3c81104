"""Provider keys from the environment or the OS keyring (docs/configuration.md "Keys").

``store`` talks to the keyring, ``keys`` is the request-time lookup (the environment first,
then the keyring) and ``command`` is ``lsp-agent auth set|remove|status``.
"""
