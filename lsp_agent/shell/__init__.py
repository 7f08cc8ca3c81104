"""Shell command lines understood before they run: parsing (``parse``), the words a
command really runs, wrappers seen through (``command_words``), arity for "always" patterns
(``arity``), the permission plan (``plan``), and the process group a command runs in
(``process``). Imports the core, ``workspace``, ``sandbox`` and ``system`` only.
"""
