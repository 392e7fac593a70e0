"""Base class of every spec model: strict (unknown keys are errors) and immutable."""

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)  # YAML gives real types: `count: true` is no 1
