"""The hooks' feeds and ``RunOptions`` merged with the caller's, as TensorFlow's ``_HookedSession``."""

from __future__ import annotations

import sys

__all__ = ["merge_requests", "new_run_metadata", "new_run_options"]


def new_run_options():
    """An empty ``RunOptions`` (what TensorFlow hands ``after_run``), or ``None`` without TF."""
    config = sys.modules.get("tensorflow.core.protobuf.config_pb2")
    return None if config is None else config.RunOptions()


def new_run_metadata():
    """An empty ``RunMetadata``, or ``None`` without TensorFlow (never imports it)."""
    config = sys.modules.get("tensorflow.core.protobuf.config_pb2")
    return None if config is None else config.RunMetadata()


def _feed_name(key):
    return getattr(key, "name", None) or str(key)


def _check_disjoint(current, incoming, message):
    common = set(current).intersection(incoming)
    if common:
        names = ", ".join(sorted(_feed_name(k) for k in common))
        raise RuntimeError(f"{message} Conflict(s): {names}")


def _merge_run_options(options, incoming):
    """Merges ``incoming`` into ``options`` as TensorFlow's ``_HookedSession`` does."""
    options.trace_level = max(options.trace_level, incoming.trace_level)
    options.timeout_in_ms = max(options.timeout_in_ms, incoming.timeout_in_ms)
    options.inter_op_thread_pool = max(options.inter_op_thread_pool, incoming.inter_op_thread_pool)
    options.output_partition_graphs = max(options.output_partition_graphs,
                                          incoming.output_partition_graphs)
    options.debug_options.debug_tensor_watch_opts.extend(
        incoming.debug_options.debug_tensor_watch_opts)
    options.debug_options.reset_disk_byte_usage = (
        options.debug_options.reset_disk_byte_usage or incoming.debug_options.reset_disk_byte_usage)
    options.report_tensor_allocations_upon_oom = (
        options.report_tensor_allocations_upon_oom or incoming.report_tensor_allocations_upon_oom)


def merge_requests(args_list, feed_dict, options):
    """The step's feeds and options: the caller's and every hook's, merged as TensorFlow does.

    Returns:
        ``(feed_dict, options)``; ``options`` is a new ``RunOptions`` if a hook set any.
    Raises:
        RuntimeError: two parties feed the same tensor.
    """
    hook_feeds = None
    for args in args_list:
        if args is None:
            continue
        if args.feed_dict:
            if hook_feeds is None:
                hook_feeds = dict(args.feed_dict)
            else:
                _check_disjoint(hook_feeds, args.feed_dict, "Same tensor is fed by two hooks.")
                hook_feeds.update(args.feed_dict)
        if args.options is not None:
            if options is None or not hasattr(options, "CopyFrom"):
                merged = new_run_options()
            else:
                merged = type(options)()
                merged.CopyFrom(options)
            _merge_run_options(merged, args.options)
            options = merged
    if hook_feeds is not None:
        if feed_dict:
            _check_disjoint(feed_dict, hook_feeds,
                            "Same tensor is fed by a SessionRunHook and user.")
            hook_feeds.update(feed_dict)
        feed_dict = hook_feeds
    return feed_dict, options
