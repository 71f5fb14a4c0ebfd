"""The plugin queries of schedlab.schedule, as issue 35 spells them:
can_schedule(fd, "normalization", inputs) -> (ok, reason),
compute_heuristics(fd, plugin, inputs) -> an editable HeuristicParams,
schedule(fd, plugin, params) applies them, find_compatible_schedulers(fd,
inputs); a refusal's reason is the plugin's, an unknown plugin's error lists
the loaded ones."""
import re

import numpy as np
import pytest

import schedlab
from schedlab import schedule

RNG = np.random.default_rng(352)
BUILTINS = {"autosched", "normalization", "pointwise", "reduction", "script", "transpose"}
POINTWISE_REFUSAL = ("pointwise schedules fusions without reductions; T1 is a max reduction "
                     "(a single expression it takes serially, as the last resort)")


def softmax_rows():
    return RNG.uniform(-4, 4, (4, 256)).astype(np.float32)


def softmax_ref(a):
    e = np.exp(a.astype(np.float64) - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_an_edited_parameter_changes_the_kernel():
    a = softmax_rows()
    params = schedule.compute_heuristics(schedlab.load_fusion("softmax"), "normalization", [a])
    assert isinstance(params, schedule.HeuristicParams) and params.plugin == "normalization"
    assert params.vector == "4" and params["vector"] == "4"

    as_computed = schedlab.load_fusion("softmax")
    schedule.schedule(as_computed, "normalization", params)
    params.vector = "1"  # nvFuser's spelling: heuristic_params.vectorization_factor = 1
    edited = schedlab.load_fusion("softmax")
    applied = schedule.schedule(edited, "normalization", params)
    assert applied.vector == "1" and applied == params

    # Four-wide copies of the input row as computed, none once edited.
    assert "sl_vec_copy<float, 4>" in as_computed.fusion.print_kernel()
    assert "sl_vec_copy" not in edited.fusion.print_kernel()
    for fd in (as_computed, edited):
        (y,) = fd.manual_execute([a], applied)
        np.testing.assert_allclose(y, softmax_ref(a), rtol=1e-5, atol=1e-7)
        fd.manual_validate([a])


def test_params_are_edited_as_attributes_or_items_of_their_plugin():
    a = softmax_rows()
    params = schedule.compute_heuristics(schedlab.load_fusion("softmax"), "normalization", [a])
    assert list(params) == list(params.keys()) and "persist" in params and len(params) >= 2
    assert params == params.to_dict() and params.inputs[0] is a
    params["persist"] = 2
    assert params.persist == 2 and params.to_dict()["persist"] == 2
    known = ", ".join(params.keys())
    with pytest.raises(AttributeError, match=re.escape(
            f"the normalization plugin has no parameter 'vectorization_factor'; its parameters: "
            f"{known}")):
        params.vectorization_factor = 1
    with pytest.raises(KeyError, match="no parameter 'blok'"):
        params["blok"]
    assert "normalization: {" in repr(params)


def test_schedule_checks_whose_params_it_is_given():
    a = softmax_rows()
    params = schedule.compute_heuristics(schedlab.load_fusion("softmax"), "normalization", [a])
    fd = schedlab.load_fusion("softmax")
    with pytest.raises(schedlab.Error, match="the parameters are the normalization plugin's; "
                                             "expected the reduction plugin's"):
        schedule.schedule(fd, "reduction", params)
    with pytest.raises(schedlab.Error, match="found parameters in both places"):
        schedule.schedule(fd, "normalization", params, params)
    with pytest.raises(schedlab.Error, match="expected the parameters as a HeuristicParams or a "
                                             "dict, found list"):
        schedule.schedule(fd, "normalization", [a], [1])
    # Nothing was applied; the inputs-first spelling with a dict still works.
    assert "blockIdx" not in fd.fusion.print_kernel()
    applied = schedule.schedule(fd, "normalization", [a], {"vector": "2"})
    assert applied.vector == "2" and "sl_vec_copy<float, 2>" in fd.fusion.print_kernel()


def test_a_refusal_gives_the_plugins_reason():
    fd = schedlab.load_fusion("softmax")
    a = softmax_rows()
    assert schedule.can_schedule(fd, "normalization", [a]) == (True, "")
    assert schedule.can_schedule(fd, "pointwise", [a]) == (False, POINTWISE_REFUSAL)
    ok, reason = schedule.can_schedule(fd, "reduction", [a])
    assert not ok and reason.endswith("a normalization, which the normalization plugin schedules")
    assert schedule.find_compatible_schedulers(fd, [a]) == ["normalization", "autosched"]
    for ask in (schedule.compute_heuristics, schedule.schedule):
        with pytest.raises(schedlab.ScheduleError) as info:
            ask(fd, "pointwise", [a])
        assert info.value.message == "pointwise cannot schedule the fusion: " + POINTWISE_REFUSAL
    assert "blockIdx" not in fd.fusion.print_kernel()


@pytest.mark.parametrize("ask", ["can_schedule", "compute_heuristics", "schedule"])
def test_an_unknown_plugin_lists_the_loaded_ones(ask):
    fd = schedlab.load_fusion("softmax")
    with pytest.raises(schedlab.Error) as info:
        getattr(schedule, ask)(fd, "normalisation", [softmax_rows()])
    e = info.value
    assert e.primitive == ask
    m = re.fullmatch(r"unknown plugin 'normalisation' \(loaded: ([a-z_, ]+); searched (.+)\)",
                     e.message)
    assert m, e.message
    assert BUILTINS <= set(m.group(1).split(", "))
