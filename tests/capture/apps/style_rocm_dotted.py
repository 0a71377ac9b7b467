"""`import rocm.bindings.hip as hip`, the dotted spelling of the rocm.bindings layout."""
import rocm.bindings.hip as hip

err, dev = hip.hipMalloc(16)
assert err == hip.hipError_t.hipSuccess, err
hip.hipMemset(dev, 7, 16)
back = bytearray(16)
hip.hipMemcpy(back, dev, 16, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
hip.hipFree(dev)
assert bytes(back) == b"\x07" * 16
print("style_rocm_dotted: ok")
