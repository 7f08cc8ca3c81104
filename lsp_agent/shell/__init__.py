"""Shell command lines understood before they run: parsing (``parse``), the words a
command really runs, wrappers seen through (``command_words``), arity for "always" patterns
(``arity``), the permission plan (``plan``); then where a planned command's process lives:
the ``CommandRunner`` port and the local runner (``runner``), in a process group of its own
(``process``). Imports the core, ``workspace``, ``sandbox`` and ``system`` only.
"""
