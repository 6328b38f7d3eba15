"""Generated data for the embedded default: no download needed.

Both generators are deterministic in ``random_state`` and produce rows in fixed
chunks, each drawn from its own seed stream, so the first ``m`` rows of a
sample of size ``n > m`` equal a sample of size ``m``, and memory beyond the
output stays at one chunk.
"""

import numpy as np

CHUNK_ROWS = 50_000

# Rating frequencies of the generated corpus (1..5 stars): skewed towards 5
# like the Amazon 5-core files, but with every class well populated.
RATING_PROBABILITIES = (0.08, 0.10, 0.17, 0.25, 0.40)


def _chunk_rngs(n_samples, random_state, n_streams):
    """Yield ``(slice, generators)`` per chunk; seed ``[random_state, 0]`` is kept for parameters.

    Each quantity gets its own stream, so a shorter last chunk draws a prefix
    of what a full chunk would draw.
    """
    for index, start in enumerate(range(0, n_samples, CHUNK_ROWS)):
        streams = np.random.SeedSequence([random_state, index + 1]).spawn(n_streams)
        yield slice(start, min(start + CHUNK_ROWS, n_samples)), map(np.random.default_rng, streams)


def _check_size(n_samples, minimum=1):
    if int(n_samples) != n_samples or n_samples < minimum:
        raise ValueError(f"n_samples must be an integer >= {minimum}, got {n_samples!r}")
    return int(n_samples)


def make_latent_regression(n_samples, n_features, *, n_directions=10, noise=0.1, random_state=0):
    """Features uniform on ``[0, 1]^d`` and a smooth nonlinear latent target.

    ``f(x) = sum_j a_j cos(w_j . x + b_j) + noise * eps`` with ``w_j ~ N(0, (2 pi)^2 / d I)``
    (about one period across the unit cube, whatever ``d``), ``b_j`` uniform
    on ``[0, 2 pi)``, ``a_j ~ N(0, 1 / n_directions)`` and ``eps ~ N(0, 1)``.
    A Gaussian-kernel model can fit it, a linear one cannot.

    Parameters
    ----------
    n_samples, n_features : int
    n_directions : int, default=10
        Number of cosine ridges in the latent function.
    noise : float, default=0.1
        Standard deviation of the additive Gaussian noise.
    random_state : int, default=0

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    target : ndarray of shape (n_samples,)
    """
    n_samples = _check_size(n_samples)
    if n_features < 1:
        raise ValueError(f"n_features must be >= 1, got {n_features!r}")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise!r}")
    rng = np.random.default_rng([random_state, 0])
    W = rng.normal(scale=2 * np.pi / np.sqrt(n_features), size=(n_features, n_directions))
    b = rng.uniform(0, 2 * np.pi, size=n_directions)
    a = rng.normal(scale=1 / np.sqrt(n_directions), size=n_directions)

    X = np.empty((n_samples, n_features))
    target = np.empty(n_samples)
    for rows, (x_rng, noise_rng) in _chunk_rngs(n_samples, random_state, 2):
        X[rows] = x_rng.uniform(size=(rows.stop - rows.start, n_features))
        target[rows] = np.cos(X[rows] @ W + b) @ a
        target[rows] += noise * noise_rng.standard_normal(rows.stop - rows.start)
    return X, target


def make_review_corpus(
    n_samples,
    *,
    vocabulary_size=2000,
    sentiment_fraction=0.2,
    sentiment_share=0.3,
    mean_length=40,
    random_state=0,
):
    """Review-like texts whose word distribution depends on the 1..5 star rating.

    Words are tokens ``"w0"``, ``"w1"``, ...; most come from a Zipf background
    shared by all ratings. A fraction of the vocabulary are "sentiment" words,
    each with a position on the 1..5 scale; a share of every review's tokens
    is drawn from them with weight ``exp(-(position - rating)^2 / 2)``.

    Parameters
    ----------
    n_samples : int
        Number of reviews.
    vocabulary_size : int, default=2000
    sentiment_fraction : float, default=0.2
        Fraction of the vocabulary carrying rating information.
    sentiment_share : float, default=0.3
        Expected fraction of each review's tokens drawn from sentiment words.
    mean_length : int, default=40
        Mean number of tokens per review (at least 5).
    random_state : int, default=0

    Returns
    -------
    texts : list of str
    ratings : ndarray of int64 in 1..5, shape (n_samples,)
    """
    n_samples = _check_size(n_samples)
    if not 0 < sentiment_fraction < 1 or not 0 <= sentiment_share <= 1:
        raise ValueError(
            "sentiment_fraction must be in (0, 1) and sentiment_share in [0, 1], "
            f"got {sentiment_fraction!r} and {sentiment_share!r}"
        )
    if mean_length < 5:
        raise ValueError(f"mean_length must be >= 5, got {mean_length!r}")
    rng = np.random.default_rng([random_state, 0])
    words = np.array([f"w{i}" for i in range(vocabulary_size)])
    n_sentiment = max(1, int(sentiment_fraction * vocabulary_size))
    sentiment_words = rng.choice(vocabulary_size, size=n_sentiment, replace=False)
    positions = rng.uniform(0.5, 5.5, size=n_sentiment)
    background = 1.0 / np.arange(1, vocabulary_size + 1)
    background /= background.sum()
    by_rating = np.exp(-0.5 * (positions[None, :] - np.arange(1, 6)[:, None]) ** 2)
    by_rating /= by_rating.sum(axis=1, keepdims=True)

    texts = []
    ratings = np.empty(n_samples, dtype=np.int64)
    for rows, (rating_rng, length_rng, chunk_rng) in _chunk_rngs(n_samples, random_state, 3):
        chunk_ratings = rating_rng.choice(5, size=rows.stop - rows.start, p=RATING_PROBABILITIES)
        lengths = 5 + length_rng.poisson(mean_length - 5, size=chunk_ratings.size)
        for rating, length in zip(chunk_ratings, lengths):
            n_sent = chunk_rng.binomial(length, sentiment_share)
            tokens = np.concatenate(
                [
                    chunk_rng.choice(vocabulary_size, size=length - n_sent, p=background),
                    sentiment_words[chunk_rng.choice(n_sentiment, size=n_sent, p=by_rating[rating])],
                ]
            )
            chunk_rng.shuffle(tokens)
            texts.append(" ".join(words[tokens]))
        ratings[rows] = chunk_ratings + 1
    return texts, ratings
