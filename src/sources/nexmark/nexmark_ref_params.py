#!/usr/bin/env python3
"""Runs the reference generator of the Nexmark notes (REF_PY) with non-default parameters.

    nexmark_ref_params.py REF_PY N OUT [--param=value ...]

The reference's command line only takes N and OUT; its parameters are Gen(...) arguments and
module constants. This script loads the reference as a module, sets those parameters, and writes
events [first-event, first-event + N) with the reference's own Gen.event and to_json, one line
each, exactly as the reference's __main__ does. It computes nothing itself. Parameter names are
nexmark_emit's; the ones the reference hard-codes (avg sizes, seed, out-of-order) are rejected.
"""
import importlib.util
import sys


def main():
    ref_path, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    spec = importlib.util.spec_from_file_location("nexmark_ref", ref_path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    gen_args = {}
    first_event = 0
    consts = {"person-proportion": "P_PROP", "auction-proportion": "A_PROP",
              "bid-proportion": "B_PROP", "hot-auction-ratio": "HOT_AUCTION_RATIO",
              "hot-bidders-ratio": "HOT_BIDDER_RATIO", "hot-sellers-ratio": "HOT_SELLER_RATIO",
              "in-flight-auctions": "INFLIGHT", "active-people": "ACTIVE_PEOPLE"}
    args = {"rate": "rate", "generators": "gens", "base-time": "base", "first-id": "first_id",
            "first-num": "first_num"}
    for a in sys.argv[4:]:
        name, value = a[2:].split("=", 1)
        value = int(value)
        if name in consts:
            setattr(m, consts[name], value)
        elif name in args:
            gen_args[args[name]] = value
        elif name == "first-event":
            first_event = value
        else:
            sys.exit("nexmark_ref_params.py: the reference has no parameter --" + name)
    m.P = m.P_PROP + m.A_PROP + m.B_PROP
    g = m.Gen(**gen_args)
    with open(out, "w") as f:
        for k in range(first_event, first_event + n):
            f.write(m.to_json(*g.event(k)) + "\n")


if __name__ == "__main__":
    main()
