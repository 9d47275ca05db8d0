# matmul of float64, float16 and bfloat16 arrays on the H200 against CuPy and PyTorch in one run: GPU ms a
# call (CUDA events around 20 calls), TFLOP/s, and the largest error beside the peers' (float64:
# in float64 epsilons of sum |a||b|; float16: in float32 epsilons, the output's rounding included).
import cupy as cp, numpy as np, torch, memhier


def gpu_ms(f, reps=20):
    f(); cp.cuda.Device().synchronize()
    a, b = cp.cuda.Event(), cp.cuda.Event()
    a.record()
    for _ in range(reps): f()
    b.record(); b.synchronize()
    return cp.cuda.get_elapsed_time(a, b) / reps


def error(a, b, c, eps, rows=64):
    """The largest error of c's first rows against a long double reference, in eps of sum |a||b|."""
    la, lb = cp.asnumpy(a[:rows]).astype(np.longdouble), cp.asnumpy(b).astype(np.longdouble)
    got = cp.asnumpy(c[:rows]).astype(np.longdouble)
    return float(np.max(np.abs(got - la @ lb) / (np.abs(la) @ np.abs(lb)))) / eps


rng = np.random.default_rng(0)
for dtype, eps, sizes in ((np.float64, np.finfo(np.float64).eps, (1024, 4096, 8192)),
                          (np.float16, np.finfo(np.float32).eps, (1024, 4096, 8192))):
    for n in sizes:
        a = cp.asarray(rng.uniform(-1, 1, (n, n)).astype(dtype))
        b = cp.asarray(rng.uniform(-1, 1, (n, n)).astype(dtype))
        ta, tb = torch.as_tensor(a, device="cuda"), torch.as_tensor(b, device="cuda")
        ours, theirs = gpu_ms(lambda: memhier.matmul(a, b)), gpu_ms(lambda: a @ b)
        torch_ms = gpu_ms(lambda: ta @ tb)
        tflops = 2 * n**3 / ours / 1e9
        errs = "" if n > 1024 else (f"  error {error(a, b, memhier.matmul(a, b), eps):.3g} eps (cupy "
                                    f"{error(a, b, a @ b, eps):.3g})")
        print(f"{np.dtype(dtype).name} {n}^3  memhier {ours:8.4f} ms ({tflops:6.1f} TFLOP/s)  cupy {theirs:8.4f}  "
              f"torch {torch_ms:8.4f}{errs}", flush=True)

# bfloat16 (CuPy has none): PyTorch tensors through memhier and torch's own matmul. At 1024^3 the
# loop of 20 calls may be bound by the binding's host time (float64 and float16 both took ~0.06 ms
# there at cd176a2 where cuBLAS alone takes 0.02-0.045)
for n in (1024, 4096, 8192):
    ta = torch.from_numpy(rng.uniform(-1, 1, (n, n)).astype(np.float32)).to("cuda", torch.bfloat16)
    tb = torch.from_numpy(rng.uniform(-1, 1, (n, n)).astype(np.float32)).to("cuda", torch.bfloat16)
    ours, torch_ms = gpu_ms(lambda: memhier.matmul(ta, tb)), gpu_ms(lambda: ta @ tb)
    print(f"bfloat16 {n}^3  memhier {ours:8.4f} ms ({2 * n**3 / ours / 1e9:6.1f} TFLOP/s)  torch {torch_ms:8.4f}",
          flush=True)
