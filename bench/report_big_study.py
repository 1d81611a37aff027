"""A study of 100,000 records for the report's size and render benchmark: a synthetic
objective over a 6-parameter space, random order, a tenth of the configurations failing."""
import math, random, sys, time
import ktune

n = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
params = {f"p{i}": list(range(10)) for i in range(6)}
study = ktune.Study(params, strategy="random", storage=f"sqlite:///{sys.argv[1]}", study_name="big", max_evals=n, seed=1)
rng = random.Random(1)
t0 = time.time()
kinds = ["compile", "runtime", "timeout", "wrong_output"]
while True:
    batch = study.ask_batch(1000)
    if not batch:
        break
    for c in batch:
        if (c["p0"] * 7 + c["p1"] * 3) % 10 == 0:
            study.tell(c, failure=kinds[(c["p2"]) % 4], reason=f"failed at p2={c['p2']}")
        else:
            v = math.exp(0.3 * abs(c["p0"] - 4) + 0.1 * c["p1"] + 0.05 * (c["p2"] == c["p3"])) * (1 + 0.02 * rng.random())
            study.tell(c, v)
print(f"{n} records in {time.time() - t0:.1f} s")
