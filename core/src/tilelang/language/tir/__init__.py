"""TVM's TIR-script surface as TileLang exposes it: `common` (the backend-neutral names), `ir` (adapted
functions), `op` (``tirx.op``), `entry` (``prim_func`` / ``macro``), `exports` (which names belong to a backend)."""
