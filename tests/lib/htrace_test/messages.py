"""The message matcher of the Python oracles (trace_check, the htrace-correct checker, the
htrace-report truth, the traced-clock test): which send pairs with which receive, which collective
records belong to one operation. Independent of htrace: it reads python3-otf2 events only.

Point-to-point (MessageLog): a channel is (sender, receiver, communicator, tag), processes as world
ranks. MPI's non-overtaking rule pairs the k-th send posted on a channel with the k-th receive
posted on it; a receive is posted at its MpiIrecvRequest (nonblocking) or at its MpiRecv. Posting
order is taken as (time, position in the reader's stream): program order on a location whose
clock never goes backwards, time order between the threads of a process. A successfully cancelled
MpiIsend (MpiRequestCancelled before its MpiIsendComplete) sends nothing.

Collectives (CollectiveLog): members start the collectives of a communicator in the same order, so
the k-th collective a process starts on a communicator (MpiCollectiveBegin, or
NonBlockingCollectiveRequest for a nonblocking one) is the same operation on every member."""
import collections


class MessageLog:
    """Feed it every event with add(location, event, **extra); extra (e.g. the enclosing region's
    start) is kept in the record. Records are dicts: sender, receiver (world ranks), comm (ref),
    tag, size, time, location, and post_time for receives."""

    SENDS = ("MpiSend", "MpiIsend")
    RECEIVES = ("MpiRecv", "MpiIrecv")

    def __init__(self, topology):
        self.topology = topology
        self.sends = []
        self.receives = []
        self.outside = []  # (kind, location, event): the peer rank is outside the communicator
        self._seq = 0
        self._open_isends = {}  # (world rank, request id) -> send record
        self._posted = {}  # (world rank, request id) -> (time, seq) of the MpiIrecvRequest

    def add(self, location, event, **extra):
        kind = type(event).__name__
        self._seq += 1
        me = self.topology.world_rank.get(location._ref, -1)
        if kind in self.SENDS:
            peer = self.topology.peer(event.communicator._ref, me, event.receiver)
            if peer is None:
                self.outside.append((kind, location, event))
                return
            record = dict(extra, sender=me, receiver=peer, comm=event.communicator._ref,
                          tag=event.msg_tag, size=event.msg_length, time=event.time,
                          location=location, order=(event.time, self._seq), cancelled=False)
            self.sends.append(record)
            if kind == "MpiIsend":
                self._open_isends[(me, event.request_id)] = record
        elif kind == "MpiIsendComplete":
            self._open_isends.pop((me, event.request_id), None)
        elif kind == "MpiIrecvRequest":
            self._posted[(me, event.request_id)] = (event.time, self._seq)
        elif kind == "MpiRequestCancelled":
            send = self._open_isends.pop((me, event.request_id), None)
            if send is not None:
                send["cancelled"] = True
            self._posted.pop((me, event.request_id), None)
        elif kind in self.RECEIVES:
            order = (event.time, self._seq)
            if kind == "MpiIrecv":
                order = self._posted.pop((me, event.request_id), order)
            peer = self.topology.peer(event.communicator._ref, me, event.sender)
            if peer is None:
                self.outside.append((kind, location, event))
                return
            self.receives.append(dict(extra, sender=peer, receiver=me, comm=event.communicator._ref,
                                      tag=event.msg_tag, size=event.msg_length, time=event.time,
                                      location=location, post_time=order[0], order=order))

    def channels(self):
        """{channel: (sends, receives)}, each list in posting order (cancelled sends left out)."""
        out = collections.defaultdict(lambda: ([], []))
        for s in self.sends:
            if not s["cancelled"]:
                out[channel(s)][0].append(s)
        for r in self.receives:
            out[channel(r)][1].append(r)
        for sends, receives in out.values():
            sends.sort(key=lambda s: s["order"])
            receives.sort(key=lambda r: r["order"])
        return dict(out)

    def match(self):
        """(pairs, unmatched sends, unmatched receives): pairs is [(send, receive)], channels in
        sorted order, each channel's messages in posting order."""
        pairs, unmatched_sends, unmatched_receives = [], [], []
        channels = self.channels()
        for key in sorted(channels):
            out, into = channels[key]
            pairs += zip(out, into)
            unmatched_sends += out[len(into):]
            unmatched_receives += into[len(out):]
        return pairs, unmatched_sends, unmatched_receives


def channel(record):
    return (record["sender"], record["receiver"], record["comm"], record["tag"])


class CollectiveLog:
    """Feed it every event with add(location, event, **extra); the record keeps the extra given at
    its start (and what the end adds). instances() groups the completed collectives."""

    def __init__(self, topology):
        self.topology = topology
        self._open_blocking = {}  # location ref -> record between MpiCollectiveBegin and End
        self._open_nonblocking = {}  # (world rank, request id) -> record
        self.records = []  # completed, in the reader's order of their ends
        self._seq = 0

    def _start(self, location, event, blocking, extra):
        return dict(extra, location=location, begin=event.time, blocking=blocking, started=self._seq)

    def add(self, location, event, **extra):
        kind = type(event).__name__
        self._seq += 1
        me = self.topology.world_rank.get(location._ref, -1)
        if kind == "MpiCollectiveBegin":
            self._open_blocking[location._ref] = self._start(location, event, True, extra)
        elif kind == "NonBlockingCollectiveRequest":
            self._open_nonblocking[(me, event.request_id)] = self._start(location, event, False, extra)
        elif kind in ("MpiCollectiveEnd", "NonBlockingCollectiveComplete"):
            if kind == "MpiCollectiveEnd":
                record = self._open_blocking.pop(location._ref, None)
            else:
                record = self._open_nonblocking.pop((me, event.request_id), None)
            if record is None:  # an end without its start: numbered where it ends
                record = self._start(location, event, kind == "MpiCollectiveEnd", {})
            comm = event.communicator._ref
            for name, value in extra.items():
                record.setdefault(name, value)
            record.update(rank=me, comm=comm, op=event.collective_op, root=event.root,
                          sent=event.size_sent, received=event.size_received, end=event.time)
            self.records.append(record)

    def instances(self):
        """{(comm ref, k): {world rank: record}}: k numbers the collectives each process started
        on the communicator, in the order it started them."""
        out = collections.defaultdict(dict)
        count = collections.Counter()
        for record in sorted(self.records, key=lambda r: r["started"]):
            key = (record["rank"], record["comm"])
            out[(record["comm"], count[key])][record["rank"]] = record
            count[key] += 1
        return dict(out)
