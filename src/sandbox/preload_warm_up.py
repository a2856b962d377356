# The preloaded interpreter's warm-up (docs/fast-start.md), compiled into airlock with
# preload_runner.py. First use of pandas and matplotlib loads more (parsers, the Agg canvas,
# fonts, tight_layout's renderer): done once in the interpreter on made-up data, so each job
# does not pay it again. No job's data is ever in the interpreter.
def _airlock_warm_up():
    import io, sys
    if "pandas" not in sys.modules or "matplotlib.pyplot" not in sys.modules:
        return
    try:
        import pandas, matplotlib.pyplot as plt
        df = pandas.read_csv(io.StringIO("k,v\na,1.5\nb,2\n"))
        s = pandas.concat([df.groupby("k")["v"].sum().rename("x")], axis=1).fillna(0.0)
        s["t"] = s.sum(axis=1)
        s.to_csv(io.StringIO(), float_format="%.2f")
        s.to_json(io.StringIO())
        ax = s.plot.bar(figsize=(3, 2), rot=0)
        ax.set_title("t")
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.legend(["a", "b"])
        plt.tight_layout()
        plt.savefig(io.BytesIO(), format="png", dpi=50)
        plt.close("all")
        # Cached fonts keep their files open; a job's sandbox has none of our
        # descriptors, so the cache must not outlive the warm-up.
        import matplotlib.font_manager
        matplotlib.font_manager._get_font.cache_clear()
    except Exception as e:
        print("airlock zygote: warm-up skipped:", e, file=sys.stderr)
