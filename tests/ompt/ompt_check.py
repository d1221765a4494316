"""OpenMP checks on an OTF2 archive, read with the `otf2` Python bindings only.

openmp_report(path) collects, per process, the thread locations and their OpenMP events;
check_openmp(report, ...) returns the list of violations of the rules htrace's OMPT tool promises:
  - every ThreadFork has a ThreadJoin on the same location, and the team begun right after the fork
    (the encountering thread is its thread 0) is the team that fork created;
  - each member of a team has one ThreadTeamBegin and one ThreadTeamEnd per fork of the team, inside
    that fork..join interval of the encountering thread (late worker ends must have been clamped);
  - acquisition orders of each lock are 1..n without gaps (per process: lock ids are per process),
    and each ThreadReleaseLock carries the order of the acquisition it ends, on the same location;
  - every created task is completed exactly once and was switched to before completion.
"""
from collections import defaultdict

import otf2


class Team:
    """One team communicator. The recorder may reuse one definition for every instance with the
    same members, so instances are matched by position: the k-th fork creating the team on its
    encountering thread goes with the k-th ThreadTeamBegin/End of the team on every member."""

    def __init__(self, definition):
        self.definition = definition
        self.instances = []                # [(encountering location, fork time, join time)]
        self.begins = defaultdict(list)    # location -> times
        self.ends = defaultdict(list)

    def size(self):
        return len(self.begins)

    def nested(self):
        parent = self.definition.parent
        return parent is not None and parent.group.paradigm == self.definition.group.paradigm


class OpenMpReport:
    def __init__(self):
        self.locations_of_process = defaultdict(set)  # process name -> location names
        self.teams = {}                                # comm object id -> Team
        self.lock_events = defaultdict(list)           # (process, lock id) -> [(kind, order, location)]
        self.tasks = defaultdict(lambda: defaultdict(int))  # (process, team, thread, gen) -> kind -> n
        self.forks = defaultdict(int)                  # location -> number of forks
        self.regions_on_location = defaultdict(lambda: defaultdict(int))  # location -> name -> enters
        self.violations = []

    def team(self, definition):
        return self.teams.setdefault(id(definition), Team(definition))


def openmp_report(anchor):
    report = OpenMpReport()
    pending_fork = {}               # location -> fork time waiting for the team it creates
    fork_stack = defaultdict(list)  # location -> [[team, fork time]]
    with otf2.reader.open(anchor) as trace:
        for location in trace.definitions.locations:
            report.locations_of_process[location.group.name].add(location.name)
        for location, event in trace.events:
            process = location.group.name
            where = f"{process}/{location.name}"  # location names repeat across processes
            if isinstance(event, otf2.events.Enter):
                report.regions_on_location[where][event.region.name] += 1
            elif isinstance(event, otf2.events.ThreadFork):
                report.forks[where] += 1
                if where in pending_fork:
                    report.violations.append(f"{where}: fork at {pending_fork[where]} begins no team")
                pending_fork[where] = event.time
            elif isinstance(event, otf2.events.ThreadTeamBegin):
                team = report.team(event.thread_team)
                team.begins[where].append(event.time)
                if where in pending_fork:
                    fork_stack[where].append([team, pending_fork.pop(where)])
            elif isinstance(event, otf2.events.ThreadTeamEnd):
                report.team(event.thread_team).ends[where].append(event.time)
            elif isinstance(event, otf2.events.ThreadJoin):
                if not fork_stack[where]:
                    report.violations.append(f"{where}: ThreadJoin at {event.time} without a fork")
                    continue
                team, fork_time = fork_stack[where].pop()
                team.instances.append((where, fork_time, event.time))
            elif isinstance(event, otf2.events.ThreadAcquireLock):
                report.lock_events[(process, event.lock_id)].append(("acquire", event.acquisition_order, where))
            elif isinstance(event, otf2.events.ThreadReleaseLock):
                report.lock_events[(process, event.lock_id)].append(("release", event.acquisition_order, where))
            elif isinstance(event, (otf2.events.ThreadTaskCreate, otf2.events.ThreadTaskSwitch,
                                    otf2.events.ThreadTaskComplete)):
                key = (process, id(event.thread_team), event.creating_thread, event.generation_number)
                report.tasks[key][type(event).__name__] += 1
        for location, stack in fork_stack.items():
            if stack:
                report.violations.append(f"{location}: {len(stack)} fork(s) without a join")
        for location in pending_fork:
            report.violations.append(f"{location}: a fork with no team begun after it")
    return report


def check_openmp(report):
    v = list(report.violations)
    for team in report.teams.values():
        name = f"{team.definition.name} {sorted(team.begins)}"
        n = len(team.instances)
        if n == 0:
            v.append(f"team {name}: never created by a fork")
            continue
        instances = sorted(team.instances, key=lambda i: i[1])
        for where in set(team.begins) | set(team.ends):
            b, e = team.begins.get(where, []), team.ends.get(where, [])
            if len(b) != n or len(e) != n:
                v.append(f"team {name}: {where} has {len(b)} ThreadTeamBegin and {len(e)} ThreadTeamEnd, "
                         f"the team was forked {n} times")
                continue
            for (_, fork, join), begin, end in zip(instances, b, e):
                if begin < fork or end > join or end < begin:
                    v.append(f"team {name}: {where} member from {begin} to {end} outside fork {fork} .. "
                             f"join {join}")
    for (process, lock), events in report.lock_events.items():
        acquires = [order for kind, order, _ in events if kind == "acquire"]
        if sorted(acquires) != list(range(1, len(acquires) + 1)):
            v.append(f"{process} lock {lock}: acquisition orders {sorted(acquires)[:20]}... are not 1..n")
        held = {}
        for kind, order, where in events:  # events of one lock arrive in time order
            if kind == "acquire":
                held[order] = where
            elif held.pop(order, None) != where:
                v.append(f"{process} lock {lock}: release of order {order} on {where} does not match an acquire")
        if held:
            v.append(f"{process} lock {lock}: acquisitions {sorted(held)} never released")
    for key, kinds in report.tasks.items():
        generation = key[3]
        if generation == 0:
            continue  # switches back to implicit tasks
        if kinds["ThreadTaskCreate"] != 1 or kinds["ThreadTaskComplete"] != 1 or kinds["ThreadTaskSwitch"] < 1:
            v.append(f"task {key}: {dict(kinds)} (want one create, >= 1 switch, one complete)")
    return v
