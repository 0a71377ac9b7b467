"""Read-only views of an archive for people: a streaming dump (``dump``), a
Chrome/Perfetto timeline (``timeline``) and a normalised comparison of two archives
(``diff``). Each streams the archive through the public reader API and shows (or skips
and counts) any record that is not a well-formed event."""
