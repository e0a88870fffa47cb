"""Reading and validating the knowledge base: the records flow.

``document`` reads YAML with the line and column of every field; ``validation`` turns it into a record or
diagnostics; ``within`` holds the rules within one record and ``outline`` what the rules across records read of
it; ``across`` the rules across records; ``knowledge_base`` loads them all; ``verifiers`` indexes ``verify/``;
``spans``, ``placeholders`` and ``parts`` serve the rules and freshness.
"""
