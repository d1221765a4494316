"""Reading an OTF2 archive back with the independent reader: python3-otf2 for definitions and
events, otf2-print for what the bindings do not expose (archive properties). Shares no code with
htrace. Importing this module also repairs python3-otf2 3.0's InterComm binding (see below)."""
import collections
import os
import re
import subprocess

import otf2
from otf2.enums import GroupType, Paradigm


def _fix_intercomm_binding():
    """python3-otf2 3.0 gives InterComm the fields of Comm (name, group, parent, flags) followed by
    its own, so reading an InterComm definition fails (KeyError: CommFlag.NONE); and it types the
    common communicator as an InterComm although it is any Comm. Keep name + InterComm's own fields
    (groupA, groupB, parent, flags), matching the C callback, with parent typed Comm."""
    fields = otf2.definitions.InterComm._fields
    names = [f.name for f in fields]
    if names[:4] == ["name", "group", "parent", "flags"] and names[4:6] == ["groupA", "groupB"]:
        parent = fields[6]._replace(type=otf2.definitions.Comm)
        otf2.definitions.InterComm._fields = (fields[0], fields[4], fields[5], parent, fields[7])


_fix_intercomm_binding()


def anchor_path(path):
    """The .otf2 anchor file of an archive directory (or the anchor given directly)."""
    if os.path.isdir(path):
        candidates = [f for f in os.listdir(path) if f.endswith(".otf2")]
        if len(candidates) != 1:
            raise FileNotFoundError(f"'{path}': expected one .otf2 anchor file, found {len(candidates)}")
        return os.path.join(path, candidates[0])
    return path


def events_by_location(path):
    """(definitions, {location: [events in file order]}), locations in the order they first
    appear in the reader's merged stream."""
    per_location = collections.defaultdict(list)
    with otf2.reader.open(anchor_path(path)) as trace:
        defs = trace.definitions
        for location, event in trace.events:
            per_location[location].append(event)
    return defs, per_location


def events_in_ns(trace):
    """The merged event stream of an open reader with each event's time in ns from the clock's
    global offset, rounded down, as htrace's tools report times (Score-P's timers are not 1 GHz)."""
    clock = trace.definitions.clock_properties
    offset, resolution = clock.global_offset, clock.timer_resolution
    for location, event in trace.events:
        event.time = (event.time - offset) * 1_000_000_000 // resolution
        yield location, event


def archive_properties(path):
    """{name: value} of the archive properties (otf2-print -A); {} when otf2-print is missing.
    python3-otf2 does not expose archive properties."""
    try:
        out = subprocess.run(["otf2-print", "-A", anchor_path(path)], capture_output=True,
                             text=True).stdout
    except OSError:
        return {}
    names = re.findall(r"^Property name +(.*?)\s*$", out, re.M)
    values = re.findall(r"^Property value +(.*?)\s*$", out, re.M)
    return dict(zip(names, values))


class Topology:
    """Processes as world ranks: the world rank of every location and of every communicator's
    members, from the definitions. Problems found (a location outside every MPI process, no MPI
    COMM_LOCATIONS group) are listed in `problems`."""

    def __init__(self, defs):
        self.problems = []
        self.world_rank = {}  # location ref -> world rank
        master_of_group = {}
        # The MPI COMM_LOCATIONS group: the world's master locations in rank order. A writer may
        # also give communicators COMM_LOCATIONS groups of their own (htrace-report's ViTE copy
        # does): the world is the largest, the first of equals.
        worlds = [g for g in defs.groups
                  if g.group_type == GroupType.COMM_LOCATIONS and g.paradigm == Paradigm.MPI]
        if worlds:
            world = max(worlds, key=lambda g: len(g.members))  # max keeps the first of equals
            for rank, location in enumerate(world.members):
                self.world_rank[location._ref] = rank
                master_of_group[location.group._ref] = rank
        if not self.world_rank:
            self.problems.append("no MPI COMM_LOCATIONS group: world ranks are unknown")
        for location in defs.locations:
            if location._ref not in self.world_rank:
                rank = master_of_group.get(location.group._ref)
                if rank is None:
                    self.problems.append(f"location '{location.name}' ({location._ref}) belongs to "
                                         "no MPI process")
                    continue
                self.world_rank[location._ref] = rank
        self.comm_names = {}
        self.members = {}  # comm ref -> (local group world ranks, remote group world ranks or None)
        for comm in defs.comms:
            self.comm_names[comm._ref] = self._unique_name(comm)
            if isinstance(comm, otf2.definitions.InterComm):
                self.members[comm._ref] = (self._group_ranks(comm.groupA), self._group_ranks(comm.groupB))
            else:
                self.members[comm._ref] = (self._group_ranks(comm.group), None)

    def _unique_name(self, comm):
        name = comm.name or "comm"
        taken = set(self.comm_names.values())
        return name if name not in taken else f"{name}#{comm._ref}"

    def _group_ranks(self, group):
        if group is None:
            return []
        if group.group_type == GroupType.COMM_SELF:
            return None  # resolved per location: rank 0 is the process itself
        return [self.world_rank.get(m._ref, -1) for m in group.members]

    def comm_world_ranks(self, comm_ref, world_rank):
        """Members of the communicator as seen from `world_rank`: (local, remote)."""
        local, remote = self.members.get(comm_ref, ([], None))
        if local is None:
            local = [world_rank]
        if remote is not None and world_rank not in local:
            local, remote = remote, local
        return local, remote

    def peer(self, comm_ref, world_rank, rank):
        """World rank of communicator rank `rank` (remote group for intercommunicators)."""
        local, remote = self.comm_world_ranks(comm_ref, world_rank)
        group = remote if remote is not None else local
        if rank < 0 or rank >= len(group):
            return None
        return group[rank]

    def comm_rank(self, comm_ref, world_rank):
        """The communicator rank of `world_rank` (in its own group), None for a non-member."""
        local, _ = self.comm_world_ranks(comm_ref, world_rank)
        return local.index(world_rank) if world_rank in local else None
