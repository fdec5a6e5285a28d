"""The scaling benchmarks' table: strong and weak scaling per configuration, each rank's own figures
below each row (the JSON holds the same figures)."""

from __future__ import annotations


def table(report: dict) -> str:
    """Strong and weak scaling, one block per configuration, the ranks' own figures below each row."""
    lines = [f"{report['workload']} on {report['device']} (commit {report['commit']}, {report['date']}); "
             f"{report['ranks']} ranks on {report['hosts']} host(s); messages: {report['transport']}"]
    particles = report["workload"].startswith("particles")
    key = "step_ms" if particles else "total_ms"
    groups: dict = {}
    for r in report["results"]:
        groups.setdefault((r["scaling"], r["config"], r["n"] if r["scaling"] == "strong" else 0), []).append(r)
    for (scaling, config, _), rows in groups.items():
        first = rows[0]
        what = (f"n = {first['n']:,}" if scaling == "strong" else
                f"{rows[0]['n']:,} {'particles' if particles else 'atoms'} on one rank, grown with the ranks")
        lines.append(f"\n{scaling} scaling, {what}; {config.strip()}"
                     + (f", {first['steps']} steps" if particles else f", W = {first['w']:g}"))
        lines.append(f"  {'ranks':>5} {'n':>13} {'ms/step' if particles else 'total ms':>12} {'speedup':>8} "
                     f"{'efficiency':>10}" + (f" {'halo KB/step':>12} same bits" if particles else " exact"))
        for r in rows:
            speedup = f"{r['speedup']:.2f}x" if r.get("speedup") else "-"
            same = {True: "yes", False: "NO", None: "-"}
            tail = (f" {r['halo_bytes_per_step'] / 1e3:>12.1f} {same[r['identical_to_one_rank']]}" if particles
                    else f" {same[r['histogram_equals_one_rank']]}")
            lines.append(f"  {r['ranks']:>5} {r['n']:>13,} {r[key]:>12.3f} {speedup:>8} {r['efficiency']:>9.1%}{tail}")
            for p in r["per_rank"]:
                if particles:
                    stages = ", ".join(f"{k} {v:.3f}" for k, v in p["stage_ms"].items() if v)
                    lines.append(f"        rank {p['rank']}: {p['particles']:,} particles; ms/step: {stages}; "
                                 f"exchange {p['exchange_ms']:.3f}")
                else:
                    lines.append(f"        rank {p['rank']}: own part {p['own_ms']:.3f} ms")
    return "\n".join(lines)
