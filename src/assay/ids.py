"""The shapes of record ids by series (``LIT-590``, ``SOTA-364``, ``THEORY-085``, ``ADR-011``).

The shapes of check ids, text and verifier node ids belong to the check model (``assay.experiment``).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

# Every pattern here is ASCII: `[0-9]`, never `\d`, which also matches '３' and '𝟯' (look-alike ids). A number is
# three digits, or more without a leading zero: one id is written one way (SOTA-0364 would be another record than
# SOTA-364 that reads as the same; upper case alone is matched, so sota-364 is none).
_NUMBER = "([0-9]{3}|[1-9][0-9]{3,})"
SOURCE_ID = rf"^LIT-{_NUMBER}$"
CLAIM_ID = rf"^(SOTA|THEORY)-{_NUMBER}$"
DECISION_ID = rf"^ADR-{_NUMBER}$"
RECORD_ID = rf"^(LIT|SOTA|THEORY|ADR)-{_NUMBER}$"

# Ids match exactly, never stripped: the id as written is the key of the record everywhere else.
SourceId = Annotated[str, StringConstraints(strip_whitespace=False, pattern=SOURCE_ID)]
ClaimId = Annotated[str, StringConstraints(strip_whitespace=False, pattern=CLAIM_ID)]
DecisionId = Annotated[str, StringConstraints(strip_whitespace=False, pattern=DECISION_ID)]
RecordId = Annotated[str, StringConstraints(strip_whitespace=False, pattern=RECORD_ID)]
