"""A small generated language to pretrain on, and a task on it to fine-tune on (Lessons 7, 10).

Nothing is downloaded: :class:`Language` generates English-like sentences from a grammar
with the structure that makes pretraining worth something downstream --

* **word classes and agreement**: determiners agree with their noun (``a dog``, ``some
  dogs``), present-tense verbs with their subject (``the dog sees``, ``the dogs see``);
* **selection**: who can do what to whom (people write letters, dogs do not; only food is
  eaten; nothing alive is ``red``);
* **nesting**: prepositional phrases and relative clauses inside noun phrases, and relative
  clauses inside those, so the subject's head noun can be far from its verb, with
  "attractor" nouns of the other number in between::

      the farmer that the wolves chased sees a red ball near the river .

Three things are built on it:

* :meth:`Language.documents` -- the pretraining corpus: 1 to 3 sentences per document,
  every document in one tense (present or past, half and half);
* :class:`TenseTask` (``"tense"``) -- the downstream task: a past-tense sentence -> the
  same sentence in the present.  Mostly copying, plus choosing each verb's form by the
  number of *its* subject (``saw -> sees | see``): the structure pretraining can teach;
* :class:`DenoisingTask` (``"denoise-t5"``, ``"denoise-bart"``) -- pretraining pairs,
  (corrupted document, what to produce), with :mod:`minitf.data.noise`.

Both tasks have the interface :func:`minitf.training.train` needs (that of
:class:`minitf.data.tasks.Task`) and share one :class:`~minitf.data.WordTokenizer`
(:meth:`Language.tokenizer`), so a model pretrained on one is fine-tuned on the other
without touching its vocabulary.  Everything is deterministic for a seed.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..checks import as_rng, check_choice, check_int, check_number
from .tasks import Task
from .noise import (BartNoise, bart_noise, noise_span_to_unique_sentinel, nonnoise_span_to_unique_sentinel,
                    random_spans_noise_mask)
from .tokenizer import WordTokenizer

Pair = tuple[str, str]

# ---- the lexicon --------------------------------------------------------------------------------
# nouns: (singular, plural) by class
NOUNS = {
    "person": (("man", "men"), ("woman", "women"), ("child", "children"), ("farmer", "farmers"),
               ("teacher", "teachers"), ("king", "kings"), ("queen", "queens"), ("girl", "girls"),
               ("boy", "boys")),
    "animal": (("dog", "dogs"), ("cat", "cats"), ("bird", "birds"), ("fox", "foxes"), ("horse", "horses"),
               ("mouse", "mice"), ("wolf", "wolves")),
    "food": (("apple", "apples"), ("cake", "cakes"), ("egg", "eggs"), ("carrot", "carrots")),
    "thing": (("ball", "balls"), ("book", "books"), ("box", "boxes"), ("stone", "stones"),
              ("letter", "letters"), ("key", "keys")),
    "place": (("river", "rivers"), ("house", "houses"), ("tree", "trees"), ("bridge", "bridges"),
              ("garden", "gardens"), ("hill", "hills")),
}
ANIMATE = ("person", "animal")
OBJECTS = ("food", "thing")


class Verb(NamedTuple):
    base: str  # present, plural subject: "see"
    third: str  # present, singular subject: "sees"
    past: str  # "saw"
    subjects: tuple  # noun classes that can be its subject
    objects: tuple  # noun classes that can be its object; () for an intransitive verb


VERBS = (
    # intransitive
    Verb("sleep", "sleeps", "slept", ANIMATE, ()),
    Verb("run", "runs", "ran", ANIMATE, ()),
    Verb("sing", "sings", "sang", ("person",), ()),
    Verb("laugh", "laughs", "laughed", ("person",), ()),
    Verb("swim", "swims", "swam", ANIMATE, ()),
    Verb("wait", "waits", "waited", ANIMATE, ()),
    # transitive
    Verb("see", "sees", "saw", ANIMATE, ANIMATE + OBJECTS),
    Verb("like", "likes", "liked", ANIMATE, ANIMATE + OBJECTS),
    Verb("chase", "chases", "chased", ANIMATE, ANIMATE),
    Verb("help", "helps", "helped", ("person",), ANIMATE),
    Verb("eat", "eats", "ate", ANIMATE, ("food",)),
    Verb("find", "finds", "found", ANIMATE, OBJECTS),
    Verb("carry", "carries", "carried", ANIMATE, OBJECTS),
    Verb("throw", "throws", "threw", ("person",), OBJECTS),
    Verb("write", "writes", "wrote", ("person",), ("thing",)),
)
INTRANSITIVE = tuple(v for v in VERBS if not v.objects)
TRANSITIVE = tuple(v for v in VERBS if v.objects)

ADJECTIVES = {  # adjective -> the noun classes it goes with
    "happy": ANIMATE, "tired": ANIMATE, "young": ANIMATE,
    "old": ANIMATE + OBJECTS + ("place",), "big": ANIMATE + OBJECTS + ("place",),
    "small": ANIMATE + OBJECTS + ("place",),
    "red": OBJECTS + ("place",), "green": OBJECTS + ("place",), "heavy": OBJECTS,
}
# determiners by number ("a" becomes "an" before a vowel)
DETERMINERS = {"sg": ("the", "a", "this", "every"), "pl": ("the", "some", "these", "two", "three")}
PREPOSITIONS = ("near", "behind", "under", "in", "on")
ADVERBS = ("quickly", "slowly", "again")
THAT, FULL_STOP = "that", "."
TENSES = ("present", "past")


def _lexicon() -> tuple[str, ...]:
    """Every word, in a fixed order: the vocabulary."""
    words = [FULL_STOP, THAT]
    words += sorted(set(DETERMINERS["sg"] + DETERMINERS["pl"] + ("an",)))
    words += PREPOSITIONS + ADVERBS + tuple(ADJECTIVES)
    words += [form for cls in NOUNS.values() for pair in cls for form in pair]
    words += [form for v in VERBS for form in (v.base, v.third, v.past)]
    return tuple(dict.fromkeys(words))  # distinct, in order


WORDS = _lexicon()


# ---- sentences -------------------------------------------------------------------------------------
class VerbSlot(NamedTuple):
    """A verb whose form waits for the tense: ``plural`` is its subject's number."""
    verb: Verb
    plural: bool

    def form(self, tense: str) -> str:
        if tense == "past":
            return self.verb.past
        return self.verb.base if self.plural else self.verb.third


class Sentence(NamedTuple):
    """A sentence as words and verb slots; :meth:`render` puts it in a tense."""
    items: tuple  # str or VerbSlot

    def render(self, tense: str) -> str:
        return " ".join(x.form(tense) if isinstance(x, VerbSlot) else x for x in self.items)

    def __len__(self) -> int:
        return len(self.items)


@dataclass
class Language:
    """The grammar, with the probabilities that shape it.

    ::

        S    -> NP(subject of V) VP(V) .
        VP   -> V_intransitive (adverb)  |  V_transitive NP(object of V)
        NP   -> determiner (adjective) noun (PP | RC)       determiner and noun agree
        PP   -> preposition determiner (adjective) place-noun
        RC   -> that VP                   subject relative: V agrees with the NP's noun
              | that NP V_transitive      object relative: V agrees with the inner NP

    Sentences longer than ``max_words`` (the full stop included) are drawn again.
    """

    p_adjective: float = 0.3  # an NP has an adjective
    p_pp: float = 0.15  # an NP has a prepositional phrase (places never do)
    p_relative: float = 0.2  # an NP has a relative clause (below max_depth)
    p_object_relative: float = 0.5  # a relative clause is an object relative ("that the cat saw")
    p_plural: float = 0.5  # a noun is plural
    p_adverb: float = 0.3  # an intransitive verb has an adverb
    max_depth: int = 2  # relative clauses nest at most this deep
    max_words: int = 16  # the longest sentence, full stop included

    def __post_init__(self):
        for name in ("p_adjective", "p_pp", "p_relative", "p_object_relative", "p_plural", "p_adverb"):
            check_number(name, getattr(self, name), 0, 1)
        check_int("max_depth", self.max_depth, low=0)
        check_int("max_words", self.max_words, low=4, hint="the shortest sentence has 4 words")

    words = WORDS

    def tokenizer(self, n_sentinels: int = 16) -> WordTokenizer:
        """The vocabulary as a :class:`WordTokenizer`, with ``<mask>`` and ``n_sentinels``
        T5 sentinels: one tokenizer for pretraining and fine-tuning alike."""
        return WordTokenizer(WORDS, n_sentinels=n_sentinels)

    # -- drawing -------------------------------------------------------------------------------
    @staticmethod
    def _pick(rng: np.random.Generator, options):
        return options[int(rng.integers(len(options)))]

    def _noun_phrase(self, rng, classes, depth: int) -> tuple[list, bool]:
        """An NP whose head is of one of ``classes``: (items, plural)."""
        cls = self._pick(rng, classes)
        plural = bool(rng.random() < self.p_plural)
        noun = self._pick(rng, NOUNS[cls])[int(plural)]
        items = [self._pick(rng, DETERMINERS["pl" if plural else "sg"])]
        if rng.random() < self.p_adjective:
            items.append(self._pick(rng, [a for a, ok in ADJECTIVES.items() if cls in ok]))
        items.append(noun)
        if items[0] == "a" and items[1][0] in "aeiou":
            items[0] = "an"  # an apple, an old dog
        if cls == "place":
            return items, plural
        u = rng.random()
        if u < self.p_pp:
            place, _ = self._noun_phrase(rng, ("place",), depth + 1)
            items += [self._pick(rng, PREPOSITIONS)] + place
        elif u < self.p_pp + self.p_relative and depth < self.max_depth:
            items += [THAT] + self._relative_clause(rng, cls, plural, depth + 1)
        return items, plural

    def _relative_clause(self, rng, cls: str, plural: bool, depth: int) -> list:
        """The clause after ``that`` modifying a noun of class ``cls`` and number ``plural``."""
        can_be_subject = cls in ANIMATE  # a ball does nothing: "the ball that the dog found"
        if rng.random() < self.p_object_relative or not can_be_subject:
            # "that the cats chased": the noun is the object
            verb = self._pick(rng, [v for v in TRANSITIVE if cls in v.objects])
            subject, subject_plural = self._noun_phrase(rng, verb.subjects, depth)
            return subject + [VerbSlot(verb, subject_plural)]
        # "that chased the cats": the noun is the subject
        verb = self._pick(rng, [v for v in VERBS if cls in v.subjects])
        return self._verb_phrase(rng, verb, plural, depth)

    def _verb_phrase(self, rng, verb: Verb, plural: bool, depth: int) -> list:
        items = [VerbSlot(verb, plural)]
        if verb.objects:
            obj, _ = self._noun_phrase(rng, verb.objects, depth)
            items += obj
        elif rng.random() < self.p_adverb:
            items.append(self._pick(rng, ADVERBS))
        return items

    def sentence(self, rng) -> Sentence:
        """One random sentence (no longer than ``max_words``)."""
        rng = as_rng("rng", rng)
        while True:
            verb = self._pick(rng, VERBS)
            subject, plural = self._noun_phrase(rng, verb.subjects, depth=0)
            items = subject + self._verb_phrase(rng, verb, plural, depth=0) + [FULL_STOP]
            if len(items) <= self.max_words:
                return Sentence(tuple(items))

    def sentences(self, n: int, rng, tense: str | None = None) -> list[str]:
        """``n`` sentences as text, in ``tense`` (None: each sentence's tense at random)."""
        n, rng = check_int("n", n, low=0), as_rng("rng", rng)
        if tense is not None:
            check_choice("tense", tense, TENSES)
        out = []
        for _ in range(n):
            s = self.sentence(rng)
            out.append(s.render(tense if tense is not None else self._pick(rng, TENSES)))
        return out

    def documents(self, n: int, rng, max_sentences: int = 3, exclude=frozenset()) -> list[str]:
        """``n`` documents of 1 to ``max_sentences`` sentences (uniformly), each in one tense
        drawn at random.  A sentence whose text is in ``exclude`` (held-out sentences, in
        either tense) is drawn again."""
        n, rng = check_int("n", n, low=0), as_rng("rng", rng)
        max_sentences = check_int("max_sentences", max_sentences, low=1)
        docs = []
        for _ in range(n):
            tense = self._pick(rng, TENSES)
            k = int(rng.integers(1, max_sentences + 1))
            sentences = []
            while len(sentences) < k:
                s = self.sentence(rng)
                if not exclude or (s.render("past") not in exclude and s.render("present") not in exclude):
                    sentences.append(s.render(tense))
            docs.append(" ".join(sentences))
        return docs


# ---- the downstream task ---------------------------------------------------------------------------
def as_language(language) -> Language:
    """``language`` as a :class:`Language`: one, None (the default one) or the dict of its fields."""
    if language is None:
        return Language()
    if isinstance(language, dict):
        return Language(**language)
    if not isinstance(language, Language):
        raise TypeError(f"language: expected a minitf.data.corpus.Language, got {type(language).__name__}")
    return language


class _WordTask(Task):
    """A :class:`~minitf.data.tasks.Task` over a :class:`Language`'s words (the base class's
    ``__init__`` builds a character tokenizer, so this one sets the attributes itself).
    ``config`` (JSON-ready, the language as a dict) rebuilds the task: ``type(task)(**task.config)``."""

    def __init__(self, language: Language, max_source_len: int, max_target_len: int, **config):
        self.language = language
        self.tokenizer = language.tokenizer(config["n_sentinels"])
        self.max_source_len = int(max_source_len)
        self.max_target_len = int(max_target_len)
        self.config = {"language": dataclasses.asdict(language), **config}


class TenseTask(_WordTask):
    """``the dogs that the boy saw slept . -> the dogs that the boy sees sleep .``

    A past-tense sentence of the :class:`Language` -> the same sentence in the present.
    Every word is copied except the verbs, each of which takes the form its own subject's
    number asks for -- the main verb agrees with the head of the subject, not with the
    nearest noun.  ``direction="present->past"`` is the easy way round (one past form).
    """

    name = "tense"
    DIRECTIONS = ("past->present", "present->past")

    def __init__(self, language: Language | dict | None = None, direction: str = "past->present",
                 n_sentinels: int = 16):
        check_choice("direction", direction, self.DIRECTIONS)
        self.direction = direction
        lang = as_language(language)
        super().__init__(lang, max_source_len=lang.max_words, max_target_len=lang.max_words + 1,
                         direction=direction, n_sentinels=n_sentinels)

    def sample(self, n: int, rng) -> list[Pair]:
        n, rng = check_int("n", n, low=1), as_rng("rng", rng)
        src, tgt = self.direction.split("->")
        out = []
        for _ in range(n):
            s = self.language.sentence(rng)
            out.append((s.render(src), s.render(tgt)))
        return out


# ---- the pretraining task ----------------------------------------------------------------------------
OBJECTIVES = ("t5", "bart")
"""The pretraining objectives :class:`DenoisingTask` knows: T5 span corruption, BART denoising."""


class DenoisingTask(_WordTask):
    """Pretraining pairs from the :class:`Language`'s documents: (corrupted document, target).

    * ``objective="t5"``: span corruption (noise density ``noise_density``, mean span length
      ``mean_noise_span_length``); the target is the sentinels and the spans they hide.
    * ``objective="bart"``: ``bart`` (a :class:`~minitf.data.noise.BartNoise`; by default text
      infilling and sentence permutation); the target is the whole document.

    An example is one document of 1 to ``max_sentences`` sentences; with ``pack_length``, it is
    documents concatenated and cut to exactly that many words, as T5's pipeline packs its
    corpus into fixed-length pieces (568 tokens for C4) -- which matters for T5 on short texts:
    a 16-word document gets round(2.4) = 2 noise tokens in round(2 / 3) = 1 span, and with one
    span the mask is always "the last 2 words".

    Targets get ``<eos>`` appended (by :meth:`encode_pairs`), sources carry no specials.
    Sentences in ``held_out`` (texts, in either tense: e.g. the downstream evaluation set's
    sources and targets) never appear in a document.

    >>> task = DenoisingTask("t5")
    >>> task.dataset(1, seed=0)  # doctest: +SKIP
    [('some boys <extra_id_0> . ...', '<extra_id_0> laughed slowly ...')]
    """

    def __init__(self, objective: str = "bart", language: Language | dict | None = None, *, max_sentences: int = 3,
                 noise_density: float = 0.15, mean_noise_span_length: float = 3.0, bart: BartNoise | None = None,
                 n_sentinels: int = 16, pack_length: int | None = None, held_out=()):
        self.objective = check_choice("objective", objective, OBJECTIVES)
        self.name = f"denoise-{objective}"
        self.max_sentences = check_int("max_sentences", max_sentences, low=1)
        self.noise_density = check_number("noise_density", noise_density, 0, 1)
        self.mean_noise_span_length = check_number("mean_noise_span_length", mean_noise_span_length, 0, None,
                                                   low_open=True)
        self.bart = BartNoise(**bart) if isinstance(bart, dict) else bart if bart is not None else BartNoise()
        if isinstance(held_out, str):
            raise TypeError(f"held_out: expected a collection of sentences, got a single str {held_out!r}")
        self.held_out = frozenset(held_out)
        self.pack_length = None if pack_length is None else check_int("pack_length", pack_length, low=1)
        lang = as_language(language)
        doc_len = lang.max_words * self.max_sentences if pack_length is None else self.pack_length
        # BART's infilling can lengthen a text: each length-0 span inserts a <mask> (at most
        # one per budgeted token); the T5 input is never longer than the document
        source_len = doc_len + (int(np.ceil(doc_len * self.bart.mask_ratio)) if objective == "bart" else 0)
        super().__init__(lang, max_source_len=source_len, max_target_len=doc_len + 1,
                         objective=objective, max_sentences=max_sentences, noise_density=noise_density,
                         mean_noise_span_length=mean_noise_span_length, bart=vars(self.bart).copy(),
                         n_sentinels=n_sentinels, pack_length=pack_length)
        self._full_stop = self.tokenizer.encode(FULL_STOP)[0]

    def corrupt(self, document: str, rng) -> Pair:
        """One document -> (corrupted text, target text)."""
        tok = self.tokenizer
        ids = np.array(tok.encode(document))
        if self.objective == "t5":
            mask = random_spans_noise_mask(len(ids), rng, self.noise_density, self.mean_noise_span_length)
            n_spans = int((mask & ~np.concatenate([[False], mask[:-1]])).sum())
            if n_spans > tok.n_sentinels:
                raise ValueError(f"n_sentinels: a document needs {n_spans} sentinels but the tokenizer has "
                                 f"{tok.n_sentinels}; pass a larger n_sentinels")
            source = noise_span_to_unique_sentinel(ids, mask, tok.vocab_size)
            target = nonnoise_span_to_unique_sentinel(ids, mask, tok.vocab_size)
        else:
            source = bart_noise(ids, rng, self.bart, mask_id=tok.mask_id, full_stop_id=self._full_stop)
            target = ids
        return tok.decode(source), tok.decode(target)

    def sample(self, n: int, rng) -> list[Pair]:
        n, rng = check_int("n", n, low=1), as_rng("rng", rng)
        if self.pack_length is None:
            docs = self.language.documents(n, rng, self.max_sentences, exclude=self.held_out)
        else:
            docs = []
            for _ in range(n):
                words: list[str] = []
                while len(words) < self.pack_length:
                    words += self.language.documents(1, rng, self.max_sentences, exclude=self.held_out)[0].split()
                docs.append(" ".join(words[:self.pack_length]))
        return [self.corrupt(d, rng) for d in docs]
