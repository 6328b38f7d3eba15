"""The dataset registry: one :class:`DatasetSpec` per dataset.

Adding a dataset is one entry in :data:`DATASETS` (usually one call of a
helper below). Facts about upstream files (addresses, formats, row counts,
checksums) come from ``../shared/data/README.md`` and the paper's Table 2;
checksums marked *published* could not be verified offline.
"""

from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Optional

from . import parsers
from .generated import make_latent_regression, make_review_corpus

KINDS = ("regression", "reviews", "ordinal", "generated")
OUTPUTS = ("regression", "reviews", "ordinal")


@dataclass(frozen=True)
class DatasetSpec:
    """Everything needed to obtain and read one dataset.

    Attributes
    ----------
    name : str
        Registry key, also the cache sub-folder.
    kind : {"regression", "reviews", "ordinal", "generated"}
        Where the data comes from and what it is.
    description : str
    paper : bool
        True for the eight datasets of the paper's Table 2.
    fname : str or None
        File name in the cache (``None`` when nothing is fetched).
    urls : tuple of str
        Addresses of byte-identical copies of the file, tried in order. Empty
        for files available only from an offline mirror.
    sha256 : str or None
        Expected sha256 of the file; ``None`` when unknown (the computed hash
        is then recorded in the provenance).
    mirror_path : str or None
        Path of the file inside an offline mirror folder, when it differs from
        ``<name>/<fname>`` and ``<fname>``.
    reader : callable or None
        ``reader(path) -> (X, target) | (texts, ratings) | (X, y)``, optionally with a third
        item: a dict of facts about the reading (e.g. records left out) for the provenance.
    generator : callable or None
        For generated data: ``generator(n_samples, random_state=...)``.
    output : {"regression", "reviews", "ordinal"}
        What the reader or generator returns; defaults to ``kind``.
    default_n_samples : int or None
        Size of a generated dataset when none is requested.
    shape : tuple or None
        Documented ``(rows, features)`` of the raw data (features ``None`` for text).
    notes : str
        Known peculiarities and protocol choices, copied into the provenance.
    source_path : str or None
        A local file named by configuration (:mod:`qs3study.datasets.local`),
        copied into the cache instead of downloaded.
    read_options : tuple of (str, value) pairs
        Options of the reader that change what it returns (part of the cache key).
    drop_features : tuple of int
        Columns of the reader's features left out (0-based), each for the reason
        given in ``notes``: a column the target is computed from.
    group_column : int or None
        Column (after ``drop_features``) whose value names a group of rows, such as
        a subject, for the reason given in ``notes``: trials split by group, no group
        on both sides, and tuning's folds keep groups apart; the column stays in the
        prepared arrays but is no feature of any fit (:func:`~qs3study.datasets.trial_rows`).
    """

    name: str
    kind: str
    description: str
    paper: bool = False
    fname: Optional[str] = None
    urls: tuple = ()
    sha256: Optional[str] = None
    mirror_path: Optional[str] = None
    reader: Optional[Callable] = field(default=None, repr=False)
    generator: Optional[Callable] = field(default=None, repr=False)
    output: Optional[str] = None
    default_n_samples: Optional[int] = None
    shape: Optional[tuple] = None
    notes: str = ""
    source_path: Optional[str] = None
    read_options: tuple = ()
    drop_features: tuple = ()
    group_column: Optional[int] = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.output is None:
            object.__setattr__(self, "output", self.kind)
        if self.output not in OUTPUTS:
            raise ValueError(f"{self.name}: output must be one of {OUTPUTS}, got {self.output!r}")
        if (self.generator is None) == (self.kind == "generated"):
            raise ValueError(f"{self.name}: a generator is required exactly for generated data")
        if self.kind in ("regression", "reviews") and (self.fname is None or self.reader is None):
            raise ValueError(f"{self.name}: file-backed data needs fname and reader")
        if self.sha256 is not None and len(self.sha256) != 64:
            raise ValueError(f"{self.name}: sha256 must be 64 hex digits, got {self.sha256!r}")

    def mirror_candidates(self):
        """Relative paths at which an offline mirror may hold the file, in order."""
        if self.fname is None:
            return ()
        paths = [self.mirror_path, f"{self.name}/{self.fname}", self.fname]
        return tuple(dict.fromkeys(p for p in paths if p is not None))


_UCI_LEGACY = "https://archive.ics.uci.edu/ml/machine-learning-databases"
_UCI_DATASETS = "https://raw.githubusercontent.com/treforevans/uci_datasets/master/uci_datasets"
# SNAP serves the same files over https; plain http stays as the second address.
_AMAZON_2014 = "snap.stanford.edu/data/amazon/productGraph/categoryFiles"


def _amazon_2014(name, category, n_reviews, *, paper=False):
    fname = f"reviews_{category}_5.json.gz"
    return DatasetSpec(
        name=name,
        kind="reviews",
        paper=paper,
        description=(
            f"Amazon 2014 5-core '{category}' reviews (McAuley et al.), {n_reviews:,} "
            "reviews, rating 1..5 (landing page http://jmcauley.ucsd.edu/data/amazon/)"
        ),
        fname=fname,
        urls=(f"https://{_AMAZON_2014}/{fname}", f"http://{_AMAZON_2014}/{fname}"),
        reader=parsers.read_amazon_reviews,
        shape=(n_reviews, None),
        notes="text = reviewText only (summary not used); label = overall; "
        "the 2018 files are a different collection",
    )


def _uci_datasets(short, sha256, shape, notes="", **options):
    return DatasetSpec(
        name=f"uci_{short}",
        kind="regression",
        description=(
            f"UCI-derived regression set '{short}' as prepared by the MIT-licensed "
            "uci_datasets collection (headerless CSV, last column = standardized target); "
            "a real substitute for the paper's discretized regression sets"
        ),
        fname="data.csv.gz",
        urls=(f"{_UCI_DATASETS}/{short}/data.csv.gz",),
        sha256=sha256,
        reader=parsers.read_csv_last_column_target,
        shape=shape,
        notes=notes,
        **options,
    )


def _skordinal(short, shape):
    return DatasetSpec(
        name=short,
        kind="ordinal",
        description=f"ordinal benchmark '{short}' bundled in the skordinal package",
        reader=parsers.skordinal_reader(f"load_{short}"),
        shape=shape,
        notes="classes are given; n_bins does not apply",
    )


_SPECS = [
    # The paper's eight datasets (Table 2).
    DatasetSpec(
        name="road3d",
        kind="regression",
        paper=True,
        description=(
            "UCI 246 3D Road Network (North Jutland): OSM_ID, LONGITUDE, LATITUDE -> "
            "ALTITUDE (also packaged at https://archive.ics.uci.edu/static/public/246/"
            "3d+road+network+north+jutland+denmark.zip)"
        ),
        fname="3D_spatial_network.txt",
        urls=(f"{_UCI_LEGACY}/00246/3D_spatial_network.txt",),
        reader=parsers.read_csv_last_column_target,
        shape=(434_874, 3),
        notes="Table 2 lists 3 features, so OSM_ID is kept as a feature with "
        "longitude and latitude; target altitude",
    ),
    DatasetSpec(
        name="sgemm",
        kind="regression",
        paper=True,
        description=(
            "UCI 440 SGEMM GPU kernel performance: 14 kernel parameters -> run time "
            "(also at https://archive.ics.uci.edu/static/public/440/sgemm+gpu+kernel+performance.zip)"
        ),
        fname="sgemm_product_dataset.zip",
        urls=(f"{_UCI_LEGACY}/00440/sgemm_product_dataset.zip",),
        sha256="8d3ee0d82708df11b54debc6a4fbade77c604a047f019fa7940413032eb7b096",
        mirror_path="sgemm/sgemm_product_dataset.zip",
        reader=parsers.read_sgemm_zip,
        shape=(241_600, 14),
        notes="target = mean of Run1..Run4 (ms); the paper does not say which run",
    ),
    DatasetSpec(
        name="year_prediction_msd",
        kind="regression",
        paper=True,
        description=(
            "YearPredictionMSD, LIBSVM training part (UCI 203): 90 timbre features -> year"
        ),
        fname="YearPredictionMSD.bz2",
        urls=(
            "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/regression/"
            "YearPredictionMSD.bz2",
        ),
        # Published checksum, not verified offline.
        sha256="bd820472d9a6d87ae30d6208dcbfd0e80386e96e6e6832f78c498cd78df6da29",
        reader=parsers.read_libsvm_year,
        shape=(463_715, 90),
        notes="training part only (463,715 rows = Table 2); the test file "
        "YearPredictionMSD.t.bz2 is not used",
    ),
    DatasetSpec(
        name="yolanda",
        kind="regression",
        paper=True,
        description="OpenML 42705 Yolanda: 100 features -> target column '101'",
        fname="dataset_42705.pq",
        urls=("https://data.openml.org/datasets/0004/42705/dataset_42705.pq",),
        # Published checksum, not verified offline.
        sha256="28acc6892d750abe6f7b4f01e622b41811a92597984c363db7a1f3a39505c28b",
        reader=parsers.read_yolanda_parquet,
        shape=(400_000, 100),
    ),
    _amazon_2014("amazon_baby", "Baby", 160_792, paper=True),
    _amazon_2014("amazon_beauty", "Beauty", 198_502, paper=True),
    _amazon_2014("amazon_clothing", "Clothing_Shoes_and_Jewelry", 278_677, paper=True),
    _amazon_2014("amazon_pet", "Pet_Supplies", 157_836, paper=True),
    # Smaller 2014 5-core categories: same address pattern and format.
    _amazon_2014("amazon_musical_instruments", "Musical_Instruments", 10_261),
    _amazon_2014("amazon_automotive", "Automotive", 20_473),
    _amazon_2014("amazon_instant_video", "Amazon_Instant_Video", 37_126),
    _amazon_2014("amazon_patio_lawn_garden", "Patio_Lawn_and_Garden", 13_272),
    _amazon_2014("amazon_digital_music_full", "Digital_Music", 64_706),
    # Head-of-file subsets that exist only in the offline mirror.
    DatasetSpec(
        name="road3d_subset",
        kind="regression",
        description=(
            "first 5,000 rows of UCI 3D Road Network, OSM_ID dropped: "
            "LONGITUDE, LATITUDE -> ALTITUDE (mirror only)"
        ),
        fname="3D_spatial_network_first5000_noid.csv.gz",
        sha256="23f229ea91943b652d4cee9c4e8f7f5c0661c8e989149029c03bf37b19747d91",
        mirror_path="road3d_subset/3D_spatial_network_first5000_noid.csv.gz",
        reader=parsers.read_csv_last_column_target,
        shape=(5_000, 2),
        notes="2 features, not the paper's 3: this subset has no OSM_ID column; "
        "1.15 % head-of-file subset, spatially clustered, not random",
    ),
    DatasetSpec(
        name="amazon_digital_music",
        kind="reviews",
        description=(
            "first 6,908 reviews of the Amazon 2014 5-core Digital Music file (mirror only)"
        ),
        fname="reviews_Digital_Music_5.first6908.json.gz",
        sha256="da797e7563c4f8d40c3aa86d42b47b136a90efdeab7946d30f2399693f5397f3",
        mirror_path="amazon_digital_music_5_partial/reviews_Digital_Music_5.first6908.json.gz",
        reader=parsers.read_amazon_reviews,
        shape=(6_908, None),
        notes="10.7 % head-of-file subset of 64,706 reviews, sorted by item; "
        "text = reviewText only; one review has an empty text",
    ),
    # uci_datasets collection (checksums of the mirror copies).
    _uci_datasets(
        "kin40k", "9bee7f2a9f39aa61a015f239378368601fb3978c5bb9a96433e88a55d40883ba", (40_000, 8)
    ),
    _uci_datasets(
        "keggdirected",
        "51b7bb56e3f3eae36273cdd5a549c042bdf0ec10948a6f8e6b01a1d6912212cd",
        (48_827, 20),
        "67 % exact duplicate rows: load with dedupe=True",
    ),
    _uci_datasets(
        "keggundirected",
        "117419270e50f581df18bf996ffc8b6bf1bb76c9f3640331ac9d6e64cff63d4e",
        (63_608, 27),
        "71 % exact duplicate rows: load with dedupe=True",
    ),
    _uci_datasets(
        "elevators",
        "e39bc18a80ec3611e4fd76d0f86ee377e96ba21b568b9997576d538dafe56b7b",
        (16_599, 18),
        "61 distinct target values: the 5 equal-frequency bins are uneven",
    ),
    _uci_datasets(
        "pol",
        "1c16126352954571e78f52d5a9d1b947a38655885d7cadd9407a4c9615fe4e04",
        (15_000, 26),
        "11 distinct target values, 62 % one value: 5 equal-frequency bins collapse "
        "and loading is refused",
    ),
    _uci_datasets(
        "bike",
        "411f76ae426c0e348a2629dcf6b3b29102c7db465eae780a3454c39db1dfac4f",
        (17_379, 17),
        "features 15 and 16 (casual and registered users) are dropped: the target, the count of "
        "rentals, is their sum (cnt = casual + registered, as the UCI page states)",
        drop_features=(15, 16),
    ),
    _uci_datasets(
        "pumadyn32nm",
        "10d1698944e0f6e586f2781e4b62c17c05174d4c6cdb6fb824a3e5a1b3630ae4",
        (8_192, 32),
    ),
    _uci_datasets(
        "parkinsons",
        "d20ffd9c9e5053a03fff0b770e7b0e076bf856a34538198303c897b6cc6addde",
        (5_875, 20),
        "feature 0 is the subject ID (42 subjects, 101-168 recordings each; age and sex constant within a "
        "subject): between-subject differences explain most of the target, so a same-subject lookup predicts "
        "it almost exactly across a split of rows. The split is therefore by subject (group_column 0): no "
        "subject has rows on both sides, and the ID, an arbitrary number, is not a feature",
        group_column=0,
    ),
    _uci_datasets(
        "tamielectric",
        "63507ad1493bd7f36436a900bd2bebaf957d326c6cc20120ab5aefe680f3083a",
        (45_781, 3),
        "270 rows repeat another row's features with a different target "
        "(dedupe keeps them: only exact duplicates are removed)",
    ),
    # Small ordinal benchmarks shipped inside skordinal.
    _skordinal("lev", (1_000, 4)),
    _skordinal("swd", (1_000, 10)),
    _skordinal("era", (1_000, 4)),
    _skordinal("esl", (488, 4)),
    _skordinal("balance_scale", (625, 4)),
    # Generated data for the embedded default.
    DatasetSpec(
        name="synthetic",
        kind="generated",
        output="regression",
        description="8 uniform features, smooth nonlinear latent target, 5 equal-frequency bins",
        generator=partial(make_latent_regression, n_features=8),
        default_n_samples=10_000,
    ),
    DatasetSpec(
        name="synthetic_large",
        kind="generated",
        output="regression",
        description="100 uniform features (Yolanda's width), nonlinear latent target; for scaling runs",
        generator=partial(make_latent_regression, n_features=100),
        default_n_samples=400_000,
    ),
    DatasetSpec(
        name="synthetic_reviews",
        kind="generated",
        output="reviews",
        description="review-like corpus whose word distribution depends on the 1..5 rating",
        generator=make_review_corpus,
        default_n_samples=5_000,
    ),
]

DATASETS = {spec.name: spec for spec in _SPECS}
"""Mapping ``name -> DatasetSpec`` of every known dataset."""

PAPER_DATASETS = tuple(name for name, spec in DATASETS.items() if spec.paper)


def get_spec(name):
    """Return the registry entry called ``name`` (ValueError listing the names otherwise).

    A :class:`DatasetSpec` is returned as it is, so that loaders also take
    specs that are not registered (local files, :mod:`qs3study.datasets.local`).
    """
    if isinstance(name, DatasetSpec):
        return name
    try:
        return DATASETS[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown dataset {name!r}; known datasets: {', '.join(sorted(DATASETS))}"
        ) from None
