"""Inputs and outputs: bf16 (raw bits, a DLPack bf16 tensor, or
float32/float64 rounded to nearest even), f16 both ways, DLPack in (any
producer; a non-CPU device is an error naming the input) and out (outputs
are NumPy arrays, DLPack producers)."""
import ctypes
import re

import numpy as np
import pytest

import schedlab
from schedlab import DataType, FusionDefinition

# Values on bf16's rounding ties (7 stored mantissa bits: the step at 1 is
# 2^-7): 1 + 2^-8 rounds down to 1 (even), 1 + 3 * 2^-8 up to 1 + 2^-6.
TIES = [1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -3.0, 0.5 + 2 ** -9 + 2 ** -20]
ROUNDED = [1.0, 1.0, 1 + 2 ** -6, -3.0, 0.5 + 2 ** -8]


def widen(dtype):
    """A fusion of one input of `dtype`: the input cast to f32, and negated
    and cast back to its own dtype."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], dtype=dtype)
        fd.add_output(fd.ops.cast(x, DataType.Float))
        fd.add_output(fd.ops.cast(fd.ops.neg(x), dtype))
    return fd


def bf16_bits(values):
    """The bf16 bits of float32 `values` rounded to nearest even."""
    u = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


@pytest.mark.parametrize("numpy_dtype", [np.float32, np.float64])
def test_bf16_input_from_floats_is_rounded_to_nearest_even(numpy_dtype):
    fd = widen(DataType.BFloat16)
    f32, neg = fd.execute([np.array(TIES, dtype=numpy_dtype)])
    assert f32.dtype == np.float32 and neg.dtype == np.float32  # bf16 outputs: float32
    assert f32.tolist() == ROUNDED and neg.tolist() == [-v for v in ROUNDED]
    fd.validate([np.array(TIES, dtype=numpy_dtype)])


@pytest.mark.parametrize("view", ["uint16", "V2"])
def test_bf16_input_from_raw_bits(view):
    fd = widen(DataType.BFloat16)
    bits = bf16_bits(TIES)
    assert bits.tolist()[:3] == [0x3F80, 0x3F80, 0x3F82]
    f32, neg = fd.manual_execute([bits.view(np.dtype(view))])
    assert f32.tolist() == ROUNDED and neg.tolist() == [-v for v in ROUNDED]
    # Bits are taken as they are, not rounded: a truncation is kept.
    truncated = (np.array(TIES, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
    (f32, _) = fd.execute([truncated])
    assert f32.tolist()[2] == 1 + 2 ** -7


def test_bf16_input_of_another_dtype_names_the_input():
    fd = widen(DataType.BFloat16)
    with pytest.raises(schedlab.Error) as info:
        fd.execute([np.array([1, 2], dtype=np.int32)])
    e = info.value
    assert e.tensor == "T0" and e.primitive == "execute"
    assert e.message == ("input 0 (T0): expected a uint16 (raw bf16 bits), float32 or float64 "
                         "array for bf16, found int32")


def test_f16_both_ways():
    fd = widen(DataType.Half)
    a = np.array([1.0, 1 + 2 ** -10, 65504.0, -2.5], dtype=np.float16)
    f32, neg = fd.manual_execute([a])
    assert neg.dtype == np.float16 and np.array_equal(neg, -a)
    assert f32.dtype == np.float32 and np.array_equal(f32, a.astype(np.float32))
    fd.manual_validate([a], [a.astype(np.float32), -a])
    # Wider floats are rounded to f16 (nearest even), as for bf16:
    # 1 + 2^-11 is a tie between 1 and 1 + 2^-10.
    wide = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 0.1], dtype=np.float64)
    f32, neg = fd.execute([wide])
    assert f32.tolist() == wide.astype(np.float16).astype(np.float32).tolist()
    assert f32.tolist()[:2] == [1.0, 1 + 2 ** -9]
    with pytest.raises(schedlab.Error, match=r"expected a float16, float32 or float64 array for "
                                             r"f16, found int64"):
        fd.execute([np.array([1, 2], dtype=np.int64)])


def test_f32_input_keeps_its_exact_dtype():
    fd = widen(DataType.Float)
    with pytest.raises(schedlab.Error, match=r"expected a float32 array for f32, found float64"):
        fd.execute([np.ones(3)])


class Producer:
    """A DLPack producer that is not a NumPy array (as a CPU torch.Tensor
    is): it lends the capsule of the array it wraps."""

    def __init__(self, array, device=(1, 0)):
        self.array = array
        self.device = device
        self.exports = 0

    def __dlpack__(self, stream=None):
        self.exports += 1
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.device


def test_dlpack_input_from_a_producer():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=["N", "K"])
        b = fd.define_tensor(shape=["K"])
        fd.add_output(fd.ops.exp(x) * b)
    a = np.random.default_rng(4).standard_normal((3, 17)).astype(np.float32)
    w = np.linspace(-1, 1, 17, dtype=np.float32)
    px, pw = Producer(a), Producer(w)
    (out,) = fd.execute([px, pw])
    assert px.exports == 1 and pw.exports == 1
    np.testing.assert_allclose(out, np.exp(a) * w, rtol=1e-6)
    (again,) = fd.manual_execute([Producer(a), w])
    np.testing.assert_allclose(again, out, rtol=1e-6)
    # Reference outputs are read through DLPack too.
    fd.manual_validate([px, pw], [Producer(out)])


def test_dlpack_input_on_a_device_names_the_input():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1])
        fd.add_output(fd.ops.neg(x))
    cuda = Producer(np.ones(4, dtype=np.float32), device=(2, 1))
    with pytest.raises(schedlab.Error) as info:
        fd.execute([cuda])
    e = info.value
    assert e.tensor == "T0" and cuda.exports == 0
    assert e.message == ("input 0 (T0): a DLPack tensor on cuda:1; expected host memory (DLPack "
                         "kDLCPU): copy it to the CPU first (tensor.cpu())")


@pytest.mark.parametrize("device, name", [((10, 0), "rocm:0"), ((13, 2), "cuda:2 (managed)"),
                                          ((7, 1), "DLPack device type 7 (id 1)")])
def test_dlpack_devices_are_named_by_dlpack_h(device, name):
    # DLDeviceType's values (dlpack.h): kDLROCM 10, kDLCUDAManaged 13, kDLVulkan 7.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1])
        fd.add_output(fd.ops.neg(x))
    with pytest.raises(schedlab.Error, match=re.escape(f"a DLPack tensor on {name}; expected")):
        fd.execute([Producer(np.ones(4, dtype=np.float32), device=device)])


@pytest.mark.parametrize("device", [(3, 0), (11, 0)])
def test_dlpack_pinned_host_memory_is_read(device):
    # kDLCUDAHost 3 and kDLROCMHost 11 are host memory.
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1])
        fd.add_output(fd.ops.neg(x))
    a = np.arange(4, dtype=np.float32)
    (out,) = fd.execute([Producer(a, device=device)])
    np.testing.assert_array_equal(out, -a)


def test_outputs_are_dlpack_producers():
    fd = widen(DataType.Float)
    a = np.arange(6, dtype=np.float32)
    f32, neg = fd.execute([a])
    assert neg.__dlpack_device__() == (1, 0)
    assert type(neg.__dlpack__()).__name__ == "PyCapsule"
    back = np.from_dlpack(neg)
    assert np.array_equal(back, -a) and back.dtype == np.float32
    # An output goes back in through DLPack, as a torch.Tensor made by
    # torch.from_dlpack(out) would.
    (_, twice) = fd.execute([Producer(neg)])
    assert np.array_equal(twice, a)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", DELETER)]
capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype = ctypes.py_object
capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class Bf16Producer:
    """A bf16 DLPack producer (as a CPU torch.bfloat16 tensor is; NumPy has
    no bf16 and cannot make one): DLPack's C structs over uint16 bits, with
    strides in elements, and a deleter that counts its calls."""

    def __init__(self, bits):
        self.bits = bits  # kept alive: the tensor's memory
        self.shape = (ctypes.c_int64 * bits.ndim)(*bits.shape)
        self.strides = (ctypes.c_int64 * bits.ndim)(*(s // 2 for s in bits.strides))
        self.deleted = 0

        def deleter(_):
            self.deleted += 1

        self.deleter = DELETER(deleter)
        self.managed = DLManagedTensor(
            DLTensor(bits.__array_interface__["data"][0], DLDevice(1, 0), bits.ndim,
                     DLDataType(4, 16, 1), self.shape, self.strides, 0),
            None, self.deleter)

    def __dlpack__(self, stream=None):
        return capsule_new(ctypes.addressof(self.managed), b"dltensor", None)

    def __dlpack_device__(self):
        return (1, 0)


def test_bf16_dlpack_input_is_read_as_bits():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], dtype=DataType.BFloat16)
        fd.add_output(fd.ops.cast(x, DataType.Float))
    values = np.array([TIES, [v * 4 for v in TIES], [-v for v in TIES]], dtype=np.float32)
    bits = bf16_bits(values)
    want = bits.astype(np.uint32) << 16
    producer = Bf16Producer(bits)
    (out,) = fd.execute([producer])
    assert out.view(np.uint32).tolist() == want.tolist() and producer.deleted == 1
    # A strided view (the transpose): DLPack's strides are followed.
    producer = Bf16Producer(bits.T)
    (out,) = fd.manual_execute([producer])
    assert out.shape == (5, 3) and out.view(np.uint32).tolist() == want.T.tolist()
    assert producer.deleted == 1
