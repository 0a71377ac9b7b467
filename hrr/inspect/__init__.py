"""Read-only views of an archive: a Chrome/Perfetto timeline (``timeline``) and a
normalised comparison of two archives (``diff``). Both stream the archive through the
public reader API and skip (and count) any record that is not a well-formed event."""
