"""What htrace stores about clocks in an archive, read with the otf2 Python bindings (independent of
htrace's code): shared by the traced clock tests."""
from collections import defaultdict

import _otf2
from otf2.enums import GroupType, Paradigm


def clock_properties(trace):
    """(archive properties, per location ref its location properties, per location ref its world
    rank: its position in the MPI COMM_LOCATIONS group) of an open otf2 reader."""
    props = {name: _otf2.Reader_GetProperty(trace.handle, name)
             for name in _otf2.Reader_GetPropertyNames(trace.handle)}
    per_location = defaultdict(dict)
    for p in trace.definitions.location_properties:
        per_location[p.location._ref][p.name] = p.value
    rank = {}
    for group in trace.definitions.groups:
        if group.group_type == GroupType.COMM_LOCATIONS and group.paradigm == Paradigm.MPI:
            for r, location in enumerate(group.members):
                rank[location._ref] = r
    return props, per_location, rank
