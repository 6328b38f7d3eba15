"""Exceptions and warnings raised by :mod:`qs3orao.datasets`."""


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


class DegenerateBinsError(DatasetError, ValueError):
    """Equal-frequency binning of a target would leave a bin empty (ties)."""


class UnevenBinsWarning(UserWarning):
    """Ties in a target made the equal-frequency bins differ by more than one row."""
