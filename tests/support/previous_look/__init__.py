"""The first look at stored blobs as it was before it was made faster: the
property tests hold the current look to exactly its verdicts and replays."""
