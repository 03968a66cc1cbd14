"""The batch job's pure decisions, below both the stores and the runs: what a head needs
(`plan`), a rewind to a readable ancestor (`rewind`), pending writes changed in place
(`rewrites`), what a write found at its last look (`races`) and the ids a repair takes
(`ids`). Nothing here reads or writes a store."""
