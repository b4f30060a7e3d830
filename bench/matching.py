"""Pairing true objects with detections for the detection benchmarks."""

from __future__ import annotations

from collections.abc import Callable

#: A detection is the object's when their IoU is at least this.
MIN_IOU = 0.5


def best_first(truths: int, found: int, iou: Callable[[int, int], float]) -> dict[int, int]:
    """True object -> detection, one each, the pairs with IoU >= ``MIN_IOU`` taken best
    first. (Taking the objects in turn let a card lying under another claim the outline of
    the card on top, which then counted as missed.)"""
    scored = sorted(((iou(k, i), k, i) for k in range(truths) for i in range(found)),
                    reverse=True)
    pairs: dict[int, int] = {}
    taken: set[int] = set()
    for value, k, i in scored:
        if value < MIN_IOU:
            break
        if k not in pairs and i not in taken:
            pairs[k] = i
            taken.add(i)
    return pairs
