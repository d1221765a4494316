"""OpenMP checks on an OTF2 archive, read with the `otf2` Python bindings only.

openmp_report(path) collects, per process, the thread locations and their OpenMP events;
check_openmp(report, ...) returns the list of violations of the rules htrace's OMPT tool promises:
  - every ThreadFork has a ThreadJoin on the same location, and the team begun right after the fork
    (the encountering thread is its thread 0) is the team that fork created;
  - each member of a team has exactly one ThreadTeamBegin and one ThreadTeamEnd for it, inside the
    fork..join interval of the encountering thread (late worker ends must have been clamped);
  - acquisition orders of each lock are 1..n without gaps (per process: lock ids are per process),
    and each ThreadReleaseLock carries the order of the acquisition it ends, on the same location;
  - every created task is completed exactly once and was switched to before completion.
"""
from collections import defaultdict

import otf2


class Team:
    def __init__(self):
        self.fork = None        # (location, time) of the fork that created it
        self.join = None
        self.begins = defaultdict(list)  # location -> times
        self.ends = defaultdict(list)
        self.parent = None      # parent communicator's name or None


class OpenMpReport:
    def __init__(self):
        self.locations_of_process = defaultdict(set)  # process name -> location names
        self.teams = defaultdict(Team)                 # comm object id -> Team
        self.team_defs = {}                            # comm object id -> comm definition
        self.lock_events = defaultdict(list)           # (process, lock id) -> [(kind, order, location)]
        self.tasks = defaultdict(lambda: defaultdict(int))  # (process, team, thread, gen) -> kind -> n
        self.forks = defaultdict(int)                  # location -> number of forks
        self.regions_on_location = defaultdict(lambda: defaultdict(int))  # location -> name -> enters
        self.violations = []


def openmp_report(anchor):
    report = OpenMpReport()
    pending_fork = {}             # location -> fork time waiting for the team it creates
    fork_stack = defaultdict(list)  # location -> [team key]
    with otf2.reader.open(anchor) as trace:
        for location in trace.definitions.locations:
            report.locations_of_process[location.group.name].add(location.name)
        for location, event in trace.events:
            where = location.name
            process = location.group.name
            if isinstance(event, otf2.events.Enter):
                report.regions_on_location[where][event.region.name] += 1
            elif isinstance(event, otf2.events.ThreadFork):
                report.forks[where] += 1
                pending_fork[where] = event.time
            elif isinstance(event, otf2.events.ThreadTeamBegin):
                key = id(event.thread_team)
                team = report.teams[key]
                report.team_defs[key] = event.thread_team
                team.begins[where].append(event.time)
                if where in pending_fork:
                    if team.fork is not None:
                        report.violations.append(f"team {event.thread_team.name} created by two forks")
                    team.fork = (where, pending_fork.pop(where))
                    fork_stack[where].append(key)
            elif isinstance(event, otf2.events.ThreadTeamEnd):
                report.teams[id(event.thread_team)].ends[where].append(event.time)
            elif isinstance(event, otf2.events.ThreadJoin):
                if not fork_stack[where]:
                    report.violations.append(f"{where}: ThreadJoin at {event.time} without a fork")
                    continue
                report.teams[fork_stack[where].pop()].join = (where, event.time)
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
    for key, team in report.teams.items():
        name = report.team_defs[key].name if key in report.team_defs else str(key)
        if team.fork is None or team.join is None:
            v.append(f"team {name}: fork {team.fork} / join {team.join} missing")
            continue
        for where in set(team.begins) | set(team.ends):
            b, e = team.begins.get(where, []), team.ends.get(where, [])
            if len(b) != 1 or len(e) != 1:
                v.append(f"team {name}: {where} has {len(b)} ThreadTeamBegin and {len(e)} ThreadTeamEnd")
                continue
            if b[0] < team.fork[1] or e[0] > team.join[1] or e[0] < b[0]:
                v.append(f"team {name}: {where} member from {b[0]} to {e[0]} outside fork {team.fork[1]}"
                         f" .. join {team.join[1]}")
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
