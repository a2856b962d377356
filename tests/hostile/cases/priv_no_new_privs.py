# case: priv-no-new-privs
# why: no_new_privs is set, so exec can never gain privilege
# expect-outcome: succeeded
# expect-stdout: BLOCKED NoNewPrivs=1
with open("/proc/self/status") as f:
    st = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
v = st.get("NoNewPrivs", "?").strip()
print("BLOCKED NoNewPrivs=1" if v == "1" else "ESCAPED NoNewPrivs=" + v)
