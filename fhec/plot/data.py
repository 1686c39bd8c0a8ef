"""`PlotData`: what the plots of a compiled program read besides the report's fields."""

from __future__ import annotations

import dataclasses

from fhec.backends.streams import Streams
from fhec.backends.target import Target
from fhec.ir.schedule import DataSchedule


@dataclasses.dataclass(frozen=True, eq=False)
class PlotData:
    """The target, the streams and the off-chip data schedule of one compiled program.

    `fhec.compile` attaches it to the `Report` it returns (`Report.with_plot_data`); it
    is not part of the report's JSON, so a report read back from disk has none."""

    target: Target
    streams: Streams
    data_schedule: DataSchedule
