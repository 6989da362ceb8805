"""Step plans: one step's fetches (the caller's and every hook's) as one flat list.

Per step a runner must send the caller's fetches and every hook's in one call,
each graph element once, and hand every party back exactly the structure it
asked for. A :class:`StepPlan` is that analysis: the flat list of unique
leaves, and for each party the *shape* that rebuilds its structure from the
flat values. Hooks ask for the same things step after step, so plans are kept
in a :class:`PlanCache` under the :func:`signature` of the structures, which is
computed at every step: a structure built anew, or edited in place, finds the
plan of what it holds now.
"""

from __future__ import annotations

from operator import is_

__all__ = ["FetchMerger", "PlanCache", "StepPlan", "rebuild", "signature"]

# A shape says how to rebuild one party's structure from the flat values: an int
# is the index of a leaf; tuples (kind, class, ...) describe containers.
_LIST, _TUPLE, _NAMEDTUPLE, _DICT = range(4)
_CONTAINERS = (list, tuple, dict)


class FetchMerger:
    """Flattens several nested fetch structures into one list of unique leaves."""

    def __init__(self):
        self.flat = []
        self._index = {}

    def add(self, fetches):
        """Adds ``fetches``; returns its shape (an int for a single leaf)."""
        if isinstance(fetches, dict):
            keys = list(fetches)
            return (_DICT, type(fetches), keys, [self.add(fetches[k]) for k in keys])
        if isinstance(fetches, (list, tuple)):
            shapes = [self.add(item) for item in fetches]
            kind = (_LIST if isinstance(fetches, list) else
                    _NAMEDTUPLE if hasattr(fetches, "_fields") else _TUPLE)
            return (kind, type(fetches), shapes)
        if fetches is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        index = self._index.get(id(fetches))
        if index is None:
            index = self._index[id(fetches)] = len(self.flat)
            self.flat.append(fetches)
        return index


def rebuild(shape, values):
    """The structure described by ``shape`` with the flat ``values`` in place of its leaves."""
    if type(shape) is int:
        return values[shape]
    kind, cls = shape[0], shape[1]
    if kind == _DICT:
        items = [(k, rebuild(s, values)) for k, s in zip(shape[2], shape[3])]
        try:
            result = cls()
        except TypeError:  # a dict subclass that needs arguments (defaultdict does not)
            result = {}
        result.update(items)
        return result
    items = [rebuild(s, values) for s in shape[2]]
    if kind == _LIST:
        return items if cls is list else cls(items)
    if kind == _NAMEDTUPLE:
        return cls(*items)
    return tuple(items) if cls is tuple else cls(items)


def signature(fetches):
    """What a fetch structure is made of: its containers, keys and the ``id()`` of every leaf.

    A name (a ``str``) stands for itself: equal names are the same fetch (a
    name converted from R is a new string object at every step).
    """
    if isinstance(fetches, dict):
        return (type(fetches), tuple((k if type(k) is str else id(k), signature(v))
                                     for k, v in fetches.items()))
    if isinstance(fetches, (list, tuple)):
        return (type(fetches), tuple(map(signature, fetches)))
    return fetches if type(fetches) is str else id(fetches)


class StepPlan:
    """One step's fetch analysis.

    Attributes:
        flat: the unique leaves, in the order they are sent.
        caller: the caller's shape (``None`` when the caller fetched nothing).
        shapes: one per hook (``None``: it asked for nothing).
        call: the session's callable for ``flat``, made by the runner on the
            plan's second use (``None`` until then; ``False``: the session has none).
    """

    __slots__ = ("flat", "caller", "shapes", "uses", "call")

    def __init__(self, caller, fetches_list):
        merger = FetchMerger()
        # ``flat`` holds every leaf and the shapes every key (in new lists): while the plan
        # is cached, the ids in its key cannot be reused by other objects
        self.caller = None if caller is None else merger.add(caller)
        self.shapes = [None if f is None else merger.add(f) for f in fetches_list]
        self.flat = merger.flat
        self.uses = 0
        self.call = None

    def results(self, values):
        """``(the caller's result, [each hook's results])`` from the flat ``values``."""
        return (None if self.caller is None else rebuild(self.caller, values),
                [values[s] if type(s) is int else None if s is None else rebuild(s, values)
                 for s in self.shapes])


def _frozen(fetches):
    """Whether ``fetches`` cannot change in place: leaves and tuples of them, no list or dict."""
    if isinstance(fetches, (list, dict)):
        return False
    if isinstance(fetches, tuple):
        return all(map(_frozen, fetches))
    return True


class PlanCache:
    """Step plans by the :func:`signature` of the caller's fetches and of each hook's.

    The very objects of the last step, when none of them can change in place
    (leaves and tuples: what most hooks hand over at every step), get the last
    plan without computing signatures.
    """

    SIZE = 64

    def __init__(self):
        self._plans = {}
        self._last = None  # (caller, fetches_list, plan) of the last step, if frozen

    def get(self, caller, fetches_list):
        """The plan for ``caller`` (a fetch structure or ``None``) and the hooks' fetches."""
        last = self._last
        if (last is not None and last[0] is caller and len(last[1]) == len(fetches_list)
                and all(map(is_, fetches_list, last[1]))):
            return last[2]
        key = (signature(caller), *map(signature, fetches_list))
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= self.SIZE:
                self._plans.clear()
            plan = self._plans[key] = StepPlan(caller, fetches_list)
        frozen = _frozen(caller) and all(map(_frozen, fetches_list))
        self._last = (caller, fetches_list, plan) if frozen else None
        return plan

    def clear(self):
        self._plans.clear()
        self._last = None
