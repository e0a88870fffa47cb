"""The shapes of identifiers and text in records: record ids by series, check ids, verifier node ids."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

SOURCE_ID = r"^LIT-[0-9]{3,}$"
CLAIM_ID = r"^(SOTA|THEORY)-[0-9]{3,}$"
DECISION_ID = r"^ADR-[0-9]{3,}$"
RECORD_ID = r"^(LIT|SOTA|THEORY|ADR)-[0-9]{3,}$"
SLUG = r"^[a-z0-9]+(-[a-z0-9]+)*$"
VERIFIER = r"^verify/[A-Za-z0-9_/]+\.py::[A-Za-z_][A-Za-z0-9_]*$"

# Every pattern here is ASCII: `[0-9]`, never `\d`, which also matches '３' and '𝟯' (look-alike ids).
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
# Ids match exactly, never stripped: the id as written is the key of the record everywhere else.
SourceId = Annotated[str, StringConstraints(strip_whitespace=False, pattern=SOURCE_ID)]
ClaimId = Annotated[str, StringConstraints(strip_whitespace=False, pattern=CLAIM_ID)]
DecisionId = Annotated[str, StringConstraints(strip_whitespace=False, pattern=DECISION_ID)]
RecordId = Annotated[str, StringConstraints(strip_whitespace=False, pattern=RECORD_ID)]
Slug = Annotated[str, StringConstraints(pattern=SLUG)]
