"""Step plans: one step's fetches (the caller's and every hook's) as one flat list, analysed once.

Per step the runner (and the Keras adapter) must send the caller's fetches and
every hook's in one call, each graph element once, and hand every party back
exactly the structure it asked for. Doing that analysis again at every step
costs far more than the hooks themselves (tens of µs for a few hooks), while
hooks ask for the same structures step after step. A :class:`StepPlan` is that
analysis done once: the flat list of unique leaves, and for each party a
*pick* (an index into the flat values, or a function rebuilding its structure).

Plans are kept in a :class:`PlanCache` under the :func:`signature` of the
structures (the ``id()`` of each leaf, the value of a name), so that a
structure built anew at every step finds its plan. The plan holds those
objects, so their ids cannot be reused by other objects while it is cached. A
structure that can change in place (a list or dict anywhere in it) is
compared item by item (by identity) with a snapshot taken with the plan before
the plan is used; tuples and leaves cannot change. A hook that feeds tensors or sets
``RunOptions`` is never planned: such steps take the general path.
"""

from __future__ import annotations

from operator import is_, itemgetter

__all__ = ["FetchMerger", "PlanCache", "StepPlan", "by_signature", "can_change", "expression",
           "rebuild", "same_request", "signature", "written_out"]

# A structure plan says how to rebuild one party's structure from the flat
# values: an int is the index of a leaf; tuples describe containers.
_LIST, _TUPLE, _NAMEDTUPLE, _DICT = range(4)
_CONTAINERS = (list, tuple, dict)
_CACHE_SIZE = 64


class FetchMerger:
    """Flattens several nested fetch structures into one list of unique leaves."""

    __slots__ = ("flat", "_index")

    def __init__(self):
        self.flat = []
        self._index = {}

    def add(self, fetches):
        """Adds ``fetches``; returns its structure plan (an int for a single leaf)."""
        if isinstance(fetches, _CONTAINERS):
            cls = type(fetches)
            if isinstance(fetches, dict):
                keys = list(fetches)
                return (_DICT, cls, keys, [self.add(fetches[k]) for k in keys])
            plans = [self.add(item) for item in fetches]
            if isinstance(fetches, list):
                return (_LIST, cls, plans)
            if hasattr(fetches, "_fields"):
                return (_NAMEDTUPLE, cls, plans)
            return (_TUPLE, cls, plans)
        if fetches is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        key = id(fetches)
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = len(self.flat)
            self.flat.append(fetches)
        return index


def rebuild(plan, values):
    """The structure described by ``plan`` with the flat ``values`` in place of its leaves."""
    if type(plan) is int:
        return values[plan]
    kind = plan[0]
    if kind == _DICT:
        _, cls, keys, plans = plan
        items = [(k, rebuild(p, values)) for k, p in zip(keys, plans)]
        try:
            result = cls()
        except TypeError:
            result = {}
        result.update(items)
        return result
    _, cls, plans = plan
    items = [rebuild(p, values) for p in plans]
    if kind == _LIST:
        return items if cls is list else cls(items)
    if kind == _NAMEDTUPLE:
        return cls(*items)
    return tuple(items) if cls is tuple else cls(items)


def _picker(plan):
    """``plan`` as a pick: the int itself, or a function of the flat values."""
    if type(plan) is int:
        return plan
    kind, cls = plan[0], plan[1]
    children = plan[3] if kind == _DICT else plan[2]
    if children and all(type(p) is int for p in children):  # flat: itemgetter does it in C
        if len(children) == 1:
            index = children[0]
            get = lambda values: (values[index],)  # noqa: E731 - itemgetter(i) gives no tuple
        else:
            get = itemgetter(*children)
        if kind == _DICT and cls is dict:
            keys = tuple(plan[2])
            return lambda values: dict(zip(keys, get(values)))
        if kind == _LIST and cls is list:
            return lambda values: list(get(values))
        if kind == _TUPLE and cls is tuple:
            return get
        if kind == _NAMEDTUPLE:
            make = cls._make
            return lambda values: make(get(values))
    return lambda values: rebuild(plan, values)


def expression(shape, values, namespace):
    """Python source rebuilding the structure ``shape`` from the flat values.

    For generated per-step code. ``values`` is the name of the list of flat
    values (``vals`` gives ``vals[2]`` for leaf 2), or a list of the leaves'
    own expressions. Plain lists, tuples and dicts with string keys are written
    out (``(vals[2], vals[0])``); other containers call their pick (on the
    list ``values`` names), added to ``namespace``.
    """
    if type(shape) is int:
        return f"{values}[{shape}]" if type(values) is str else values[shape]
    if _plain(shape):
        if shape[0] == _DICT:
            items = (f"{k!r}: {expression(p, values, namespace)}" for k, p in zip(*shape[2:]))
            return "{" + ", ".join(items) + "}"
        items = "".join(f"{expression(p, values, namespace)}, " for p in shape[2])
        return f"[{items}]" if shape[1] is list else f"({items})"
    if type(values) is not str:
        raise TypeError("a container without its own expression needs the name of the values")
    name = f"pick{len(namespace)}"
    namespace[name] = _picker(shape)
    return f"{name}({values})"


def written_out(shape):
    """Whether :func:`expression` writes ``shape`` out without a pick function."""
    if shape is None or type(shape) is int:
        return True
    return _plain(shape) and all(map(written_out, shape[3] if shape[0] == _DICT else shape[2]))


def _plain(shape):
    """A plain list or tuple, or a dict with string keys: written out as a literal."""
    kind, cls = shape[0], shape[1]
    if kind == _DICT:
        return cls is dict and all(type(k) is str for k in shape[2])
    return kind in (_LIST, _TUPLE) and cls in (list, tuple)


def signature(fetches):
    """What a fetch structure is made of: its containers, keys and the ``id()`` of every leaf.

    A name (a ``str``) stands for itself: equal names are the same fetch, and a
    name converted from R (or formatted) is a new string object at every step.
    """
    if isinstance(fetches, dict):
        return (type(fetches), tuple((k if type(k) is str else id(k), signature(v))
                                     for k, v in fetches.items()))
    if isinstance(fetches, (list, tuple)):
        return (type(fetches), tuple(map(signature, fetches)))
    return fetches if type(fetches) is str else id(fetches)


def by_signature(fetches):
    """Whether other ``fetches`` of the same :func:`signature` stand for these (else: this very
    object): structures, which may be built anew or edited, and names."""
    return isinstance(fetches, _CONTAINERS) or type(fetches) is str


def _snapshots(fetches, found):
    """Appends ``(container, its items)`` for every list and dict in ``fetches``; returns ``found``."""
    if isinstance(fetches, dict):
        found.append((fetches, (*fetches, *fetches.values())))
        items = fetches.values()
    elif isinstance(fetches, (list, tuple)):
        if not isinstance(fetches, tuple):
            found.append((fetches, tuple(fetches)))
        items = fetches
    else:
        return found
    for item in items:
        if isinstance(item, _CONTAINERS):
            _snapshots(item, found)
    return found


def can_change(fetches):
    """Whether ``fetches`` holds a list or dict (that could be edited in place)."""
    return bool(_snapshots(fetches, []))


def unchanged(snapshots):
    """True if every container still holds the very same items (compared by identity)."""
    for container, items in snapshots:
        if type(container) is dict or isinstance(container, dict):
            if len(container) * 2 != len(items) or not all(
                    map(is_, (*container, *container.values()), items)):
                return False
        elif len(container) != len(items) or not all(map(is_, container, items)):
            return False
    return True


class StepPlan:
    """One step's fetch analysis; see the module docstring.

    Attributes:
        flat: the unique leaves, in the order they are sent.
        caller: the caller's pick (``None`` when the caller fetched nothing).
        picks: one per hook given to :meth:`PlanCache.get` (``None``: no results),
            then one that is always ``None`` (for hooks that fetch nothing).
        shapes: the structure plans behind ``caller`` and ``after_picks``
            (``(caller's, [each after hook's])``), for :func:`expression`.
        after_picks: the picks in the order of the ``positions`` given to the cache.
        checks: ``(container, items)`` snapshots of the lists and dicts in the
            caller's and the hooks' fetches, compared before the plan is used again.
        direct: no hook fetches anything: the caller's call can go out untouched.
        call: a function giving the flat values, set by the user of the plan, or
            ``None``: the runner's takes no arguments (a session's ``make_callable``),
            the Keras adapter's takes a batch's logs and the step before it.
    """

    __slots__ = ("keep", "flat", "caller", "picks", "after_picks", "shapes", "checks",
                 "direct", "call")

    def __init__(self, caller, fetches_list, positions):
        merger = FetchMerger()
        self.keep = (caller, fetches_list)
        caller_shape = None if caller is None else merger.add(caller)
        self.caller = None if caller is None else _picker(caller_shape)
        picks = [None] * (len(fetches_list) + 1)
        shapes = [None] * (len(fetches_list) + 1)
        fetch_checks = []
        for position, fetches in enumerate(fetches_list):
            if fetches is not None:
                shapes[position] = merger.add(fetches)
                picks[position] = _picker(shapes[position])
                _snapshots(fetches, fetch_checks)
        self.direct = all(f is None for f in fetches_list)
        self.flat = merger.flat
        self.picks = picks
        self.after_picks = [picks[p] for p in positions]
        self.shapes = (caller_shape, [shapes[p] for p in positions])
        self.checks = _snapshots(caller, fetch_checks)  # the caller may edit its own too
        self.call = None


class PlanCache:
    """Step plans keyed by the identity of the caller's fetches and the hooks' requests.

    Args:
        before_hooks: the hooks whose ``before_run`` results are given to :meth:`get`,
            in that order.
        after_hooks: the hooks whose ``after_run`` receives results, in call order.

    Attributes:
        positions: for each of ``after_hooks``, its position among ``before_hooks``,
            or ``len(before_hooks)`` (a slot that stays ``None``) if it has none.
        stable: the last :meth:`get` gave the plan of the call before it (for the
            same caller's fetches, or a structure of their signature): the plan
            may be bound to these requests (a fused step, see
            :func:`pyhooks.session.fused_calls`, which checks the caller's
            fetches and every hook's request at every step).
    """

    __slots__ = ("_by_args", "_by_fetches", "positions", "_last", "stable")

    def __init__(self, before_hooks=(), after_hooks=()):
        self._by_args = {}
        self._by_fetches = {}
        where = {id(h): i for i, h in enumerate(before_hooks)}
        self.positions = [where.get(id(h), len(before_hooks)) for h in after_hooks]
        self._last = None  # (caller, args_list, plan, checks) of the last call: likely the next
        self.stable = False

    def clear(self):
        self._by_args.clear()
        self._by_fetches.clear()
        self._last = None
        self.stable = False

    def get(self, caller, args_list):
        """The plan for ``caller`` (a fetch structure or None) and the hooks' ``args_list``.

        ``args_list`` holds each hook's :class:`SessionRunArgs` (or ``None``).
        Hooks usually return the same object at every step: it is the first key.
        Hooks that make a new one per step (TensorFlow's) are found by the
        identity of their fetches, or a container's signature (an R hook
        builds its structure anew at every step). The caller's structure is
        keyed by its signature too unless it is a leaf: a caller builds a new
        list at every ``run([train_op, loss])``.

        Returns:
            the plan, or ``None`` if a hook feeds tensors or sets options.
        """
        last = self._last
        if (last is not None and last[0] is caller
                and (all(map(is_, args_list, last[1]))
                     or all(map(same_request, args_list, last[1])))
                and (not last[3] or unchanged(last[3]))):
            self.stable = True
            return last[2]
        self.stable = False
        caller_key = signature(caller)
        key = (caller_key, *map(id, args_list))
        entry = self._by_args.get(key)
        if entry is not None:
            plan = entry[0]
            if not plan.checks or unchanged(plan.checks):
                self._remember(caller, args_list, plan)
                return plan
        fetches_list = []
        for args in args_list:
            if args is None:
                fetches_list.append(None)
            elif args[1] is None and args[2] is None:  # no feeds, no options
                fetches_list.append(args[0])
            else:
                return None
        # by signature: a hook may build its structure (or a name) anew at every step
        fetches_key = (caller_key, *map(signature, fetches_list))
        plan = self._by_fetches.get(fetches_key)
        if plan is None or (plan.checks and not unchanged(plan.checks)):
            plan = StepPlan(caller, fetches_list, self.positions)
            _store(self._by_fetches, fetches_key, plan)
        if all(map(is_, fetches_list, plan.keep[1])):  # the plan's own: its checks are theirs
            _store(self._by_args, key, (plan, args_list))  # holds the args: their ids stay theirs
        self._remember(caller, args_list, plan)
        return plan

    def _remember(self, caller, args_list, plan):
        """Makes ``plan`` the first one tried next time, for these very objects.

        The plan may have been made for other structures with the same
        signature: then these structures' own lists and dicts are the ones to watch.
        """
        checks = plan.checks
        keep_caller, keep_fetches = plan.keep
        if caller is not keep_caller or not all(map(_asks, args_list, keep_fetches)):
            checks = _snapshots(caller, [])
            for args in args_list:
                if args is not None:
                    _snapshots(args[0], checks)
        last = self._last
        # twice in a row (the same caller, or one of its signature: the plan is made for
        # one): a fused step checks the caller's fetches and the hooks' requests
        self.stable = last is not None and last[2] is plan
        self._last = (caller, args_list, plan, checks)


def _asks(args, fetches):
    """Whether ``args`` (a hook's request, or None) asks for that very ``fetches`` object."""
    return fetches is None if args is None else args[0] is fetches


def same_request(args, last):
    """Whether ``args`` asks what ``last`` asked: the same object, or new args made alike.

    New args count when they are of the same type, hold the very same fetches
    object and neither feeds nor options (TensorFlow's hooks return
    ``SessionRunArgs(self._loss)`` anew at every step).
    """
    return args is last or (type(args) is type(last) and last is not None
                            and args[0] is last[0] and args[1] is None and args[2] is None
                            and last[1] is None and last[2] is None)


def _store(cache, key, value):
    if len(cache) >= _CACHE_SIZE:
        cache.clear()
    cache[key] = value
