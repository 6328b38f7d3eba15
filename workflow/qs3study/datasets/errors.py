"""Exceptions and warnings raised by :mod:`qs3study.datasets`."""


class DatasetError(Exception):
    """Base class of every error raised while fetching or preparing a dataset."""


class DownloadError(DatasetError):
    """A dataset file could not be obtained from any upstream URL or mirror."""


class ChecksumError(DatasetError, ValueError):
    """A file's sha256 differs from the one recorded in the registry.

    It subclasses :class:`ValueError` as well, so that pooch treats it like its
    own hash mismatch: the temporary download is deleted and the transfer is
    retried.
    """


class IncompleteFileError(DatasetError, ValueError):
    """A downloaded file without a checksum does not parse completely, or has
    fewer or more rows than the registry documents.

    A :class:`ValueError` too, so that pooch deletes the temporary download.
    """


class CacheNotWritableError(DatasetError, PermissionError):
    """The cache folder cannot be written; the message names it and how to choose another."""


class CacheRebuildWarning(UserWarning):
    """A cache entry was unreadable or did not match its key and shape, and is rebuilt."""


class DegenerateBinsError(DatasetError, ValueError):
    """Equal-frequency binning of a target would leave a bin empty (ties)."""


class UnevenBinsWarning(UserWarning):
    """Ties in a target made the equal-frequency bins differ by more than one row."""


class DroppedRecordsWarning(UserWarning):
    """Records a declared option left out while reading a file (e.g. reviews without text)."""
