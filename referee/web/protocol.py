"""What the dashboard needs from a running referee: frames in, events out (issue 6's shape)."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from referee.observations import Observation
from referee.pipeline.events import Event

Image = npt.NDArray[np.uint8]


class FramePipeline(Protocol):
    """The running referee, one frame at a time. Only ever called from one thread."""

    def process(self, index: int, t: float, image: Image) -> list[Event]:
        """Events caused by frame ``index`` at ``t`` seconds."""
        ...

    def manual(self, observation: Observation) -> list[Event]:
        """A manual input: a declaration, or a correction (a ``card_placed`` at the outline
        of a card already on the table, with the identity the camera misread)."""
        ...

    def finish(self, t: float) -> list[Event]:
        """The source ended at ``t``: anything still pending."""
        ...
