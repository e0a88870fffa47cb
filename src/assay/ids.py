"""The shapes of record ids by series (``LIT-590``, ``SOTA-364``, ``THEORY-085``, ``ADR-011``).

The shapes of check ids, text and verifier node ids belong to the check model (``assay.experiment``).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

# Every pattern here is ASCII: `[0-9]`, never `\d`, which also matches '３' and '𝟯' (look-alike ids).
SOURCE_ID = r"^LIT-[0-9]{3,}$"
CLAIM_ID = r"^(SOTA|THEORY)-[0-9]{3,}$"
DECISION_ID = r"^ADR-[0-9]{3,}$"
RECORD_ID = r"^(LIT|SOTA|THEORY|ADR)-[0-9]{3,}$"

# Ids match exactly, never stripped: the id as written is the key of the record everywhere else.
SourceId = Annotated[str, StringConstraints(strip_whitespace=False, pattern=SOURCE_ID)]
ClaimId = Annotated[str, StringConstraints(strip_whitespace=False, pattern=CLAIM_ID)]
DecisionId = Annotated[str, StringConstraints(strip_whitespace=False, pattern=DECISION_ID)]
RecordId = Annotated[str, StringConstraints(strip_whitespace=False, pattern=RECORD_ID)]
