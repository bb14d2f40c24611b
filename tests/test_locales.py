"""The locale files: every language has every key, with the same placeholders."""

from __future__ import annotations

import re
import string
import tomllib

import pytest

from mpdemo import languages
from mpdemo.messages import EN as EN_MESSAGES
from mpdemo.ui import i18n
from mpdemo.wording import ENGLISH, NumberStyle, is_plural_spec

LOCALE_FILES = sorted(languages.LOCALES_DIR.glob("*.toml"))
CODES = [p.stem for p in LOCALE_FILES]


# Ways of writing a whole number that a translation may swap for one another ("{n}", "{n:,}",
# or a plural choice "{n:plural(# run|# runs)}"); any other spec must stay the same.
WHOLE = {"", ",", "d", ",d"}


def placeholders(template: str) -> set[tuple[str, str | None, str]]:
    """Each `{name!conv:spec}` of a template: renaming or dropping one breaks a translation."""
    return {
        (name, conv, "whole" if spec in WHOLE or is_plural_spec(spec) else spec)
        for _, name, spec, conv in string.Formatter().parse(template)
        if name is not None
    }


def test_languages_are_the_files_in_the_folder() -> None:
    assert {"en", "es", "pt"} <= set(CODES)
    assert i18n.LANGS[0] == i18n.DEFAULT_LANG
    assert [code for _, code in i18n.LANG_CHOICES] == list(i18n.LANGS)
    assert set(i18n.LANGS) == set(CODES)


@pytest.mark.parametrize("path", LOCALE_FILES, ids=CODES)
def test_every_file_parses_and_names_its_language(path) -> None:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    meta = data["meta"]
    assert meta["name"].strip()
    assert meta["decimal"] != meta["thousands"]
    assert set(data) <= {"meta", "messages", *languages.UI_SECTIONS}, set(data)


@pytest.mark.parametrize("code", [c for c in CODES if c != i18n.DEFAULT_LANG])
def test_same_keys_and_placeholders_as_the_default_language(code: str) -> None:
    base, loc = i18n.LOCALES[i18n.DEFAULT_LANG], i18n.LOCALES[code]
    for section in languages.UI_SECTIONS:
        ours, theirs = set(loc.sections[section]), set(base.sections[section])
        assert ours == theirs, (section, "missing", theirs - ours, "extra", ours - theirs)
        for key, template in base.sections[section].items():
            assert placeholders(loc.sections[section][key]) == placeholders(template), key
    # The engine's messages: mpdemo/messages.py holds the keys and the English.
    assert set(loc.messages) == set(EN_MESSAGES), set(EN_MESSAGES) ^ set(loc.messages)
    for key, template in EN_MESSAGES.items():
        assert placeholders(loc.messages[key]) == placeholders(template), key


def test_no_key_is_in_two_sections() -> None:
    for loc in i18n.LOCALES.values():
        ui, teach = loc.sections["ui"], loc.sections["teach"]
        assert not set(ui) & set(teach), set(ui) & set(teach)


def test_no_translation_is_left_empty() -> None:
    for code, loc in i18n.LOCALES.items():
        for table in (loc.strings, loc.messages):
            empty = [k for k, v in table.items() if not v.strip()]
            assert not empty, (code, empty)


def test_numbers_in_templates_follow_the_locale() -> None:
    assert i18n.t("slice_rows", "en", rows=2000, total=12345) == "2,000 of 12,345 rows"
    assert i18n.t("slice_rows", "es", rows=2000, total=12345) == "2.000 de 12.345 filas"
    slower = {"precision": "fp16", "ratio": 44.31, "ratio_low": 41.5, "ratio_high": 47.25,
              "rounds": 8, "ms": 900.0, "fp32_ms": 20.3,
              "why": {"key": "hw_cpu_lacks", "args": {"isa": "AVX2", "precision": "fp16"}}}  # fmt: skip
    assert "44,31 veces" in i18n.message("speed_slower", slower, "es")
    assert "95 % 41,50-47,25" in i18n.message("speed_slower", slower, "es")
    assert "20,3 ms por paso; CPU AVX2 sin" in i18n.message("speed_slower", slower, "es")
    assert "44.31x slower" in i18n.message("speed_slower", slower, "en")
    assert i18n.number(0.6931, "es", ".2f") == "0,69"
    assert i18n.number(0.6931, "en", ".2f") == "0.69"
    assert i18n.number(1234567.891, "es", ",.1f") == "1.234.567,9"
    # Not numbers: text, bools and repr() of a value stay as they are.
    assert i18n.number("1,5", "es") == "1,5"
    assert i18n.number(True, "es") == "True"
    text = i18n.message("model_too_big", {"value": "a.b", "params": 1234567, "limit": 10**6}, "es")
    assert text.startswith("'a.b' tiene 1.234.567 parámetros") and "1.000.000" in text


def test_a_slow_step_reads_as_milliseconds_not_an_exponent() -> None:
    # fp16 on a CPU without fp16 kernels: 15,620 ms a step once read "1,57e+04 frente a 703 ms".
    slower = {"precision": "fp16", "ratio": 22.2, "ratio_low": 21.0, "ratio_high": 23.5,
              "rounds": 6, "ms": 15620.4, "fp32_ms": 703.2,
              "why": {"key": "hw_cpu_lacks", "args": {"isa": "AVX2", "precision": "fp16"}}}  # fmt: skip
    assert "; 15,600 vs 703 ms a step;" in i18n.message("speed_slower", slower, "en")
    assert "15.600" in i18n.message("speed_slower", slower, "es")
    assert i18n.number(999.9, "en", ".3g") == "1,000"
    assert i18n.number(0.000283, "es", ".3g") == "0,000283"
    assert i18n.number(1.5e10, "en", ".3g") == "1.5e+10"  # past a billion the exponent reads better


def test_counted_strings_take_the_plural_the_count_needs() -> None:
    def done(lang: str, n: int) -> str:
        detail = i18n.t("status_count_completed", lang, count=n)
        return i18n.t("status_done", lang, count=n, detail=detail)

    assert done("es", 2) == "Terminado: 2 ejecuciones (2 completadas)."
    assert done("es", 1) == "Terminado: 1 ejecución (1 completada)."
    assert done("en", 1) == "Done: 1 run (1 completed)."
    assert done("en", 2000) == "Done: 2,000 runs (2,000 completed)."
    assert i18n.t("status_count_diverged", "es", count=3) == "3 divergieron"


def test_plural_choices_fill_in_the_count() -> None:
    pt = NumberStyle(",", ".", frozenset({0, 1}))
    template = "{n:plural(# run|# runs)} in {s:.1f} s"
    assert ENGLISH.format(template, {"n": 1, "s": 0.5}) == "1 run in 0.5 s"
    assert ENGLISH.format(template, {"n": 2000, "s": 0.5}) == "2,000 runs in 0.5 s"
    assert ENGLISH.format(template, {"n": 0, "s": 1}) == "0 runs in 1.0 s"
    assert pt.format("{n:plural(# execução|# execuções)}", {"n": 0}) == "0 execução"
    assert pt.format("{n:plural(# execução|# execuções)}", {"n": 1500}) == "1.500 execuções"
    assert pt.format("{x:plural(# vez|# vezes)}", {"x": 1.5}) == "1,5 vezes"
    assert ENGLISH.format("{n} {n:plural(file|files)}", {"n": 3}) == "3 files"
    # Engine messages go through the same formatter, in English (CLI) and in the page's language.
    assert "1,234,567 parameters" in i18n.message(
        "model_too_big", {"value": "m", "params": 1234567, "limit": 1}, "en"
    )


def test_a_spec_change_is_caught_but_whole_number_styles_are_not() -> None:
    assert placeholders("{x:.2f}") != placeholders("{x:.1f}")
    assert placeholders("{n:,} runs") == placeholders("{n:plural(# execução|# execuções)}")
    assert placeholders("{n}") == placeholders("{n:,}")
    assert placeholders("{a}") != placeholders("{b}")


def test_accept_language_picks_any_language_with_a_file() -> None:
    for code in i18n.LANGS:
        assert i18n.lang_from_header(f"{code}-XX,{code};q=0.9,de;q=0.5") == code
    assert i18n.lang_from_header("de-DE,fr;q=0.5") == i18n.DEFAULT_LANG


def test_portuguese_counts_zero_and_one_as_singular() -> None:
    assert i18n.t("status_done", "pt", count=0, detail="0") == "Concluído: 0 execução (0)."
    one = i18n.t("status_count_completed", "pt", count=1)
    assert (
        i18n.t("status_done", "pt", count=1, detail=one) == "Concluído: 1 execução (1 concluída)."
    )
    two = i18n.t("status_count_completed", "pt", count=2000)
    assert two == "2.000 concluídas"
    assert i18n.lang_from_header("pt-BR,pt;q=0.9,en;q=0.8") == "pt"
    assert ("Português", "pt") in i18n.LANG_CHOICES


@pytest.mark.parametrize("code", [c for c in CODES if c != i18n.DEFAULT_LANG])
def test_nothing_is_left_in_the_default_language_unless_the_file_says_so(code: str) -> None:
    path = languages.LOCALES_DIR / f"{code}.toml"
    same = set(tomllib.loads(path.read_text(encoding="utf-8"))["meta"].get("same_as_default", []))
    base, loc = i18n.LOCALES[i18n.DEFAULT_LANG], i18n.LOCALES[code]
    assert same <= set(loc.strings), same - set(loc.strings)
    left = {k for k, v in loc.strings.items() if base.strings.get(k) == v} - same
    left |= {k for k, v in loc.messages.items() if base.messages.get(k) == v}
    assert not left, f"{code}: still in {base.name}: {sorted(left)}"


def test_no_code_names_a_language_but_the_default() -> None:
    """Adding a language is adding its file: no Python source special-cases one."""
    root = languages.LOCALES_DIR.parents[2]
    codes = "|".join(c for c in i18n.LANGS if c != i18n.DEFAULT_LANG)
    pattern = re.compile(rf"""["']({codes})(-[A-Za-z]+)?["']""")
    hits = [
        f"{path.relative_to(root)}:{n}: {line.strip()}"
        for path in [root / "app.py", *sorted((root / "mpdemo").rglob("*.py"))]
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not hits, hits


def _sample_args(template: str) -> dict[str, object]:
    """A plausible value for every field: numbers where the spec formats numbers."""
    args: dict[str, object] = {}
    for _, name, spec, _conv in string.Formatter().parse(template):
        if not name:
            continue
        if spec and (is_plural_spec(spec) or spec[-1] in "d,"):
            args.setdefault(name, 2000)
        elif spec and spec[-1] in "efgn%":
            args.setdefault(name, 1234.5678)
        else:
            args.setdefault(name, "x")
    return args


@pytest.mark.parametrize("code", CODES)
def test_every_template_fills_without_error(code: str) -> None:
    """t() shows a template as it is when filling it fails: a broken brace must fail here."""
    loc = i18n.LOCALES[code]
    for key, template in [*loc.strings.items(), *loc.messages.items()]:
        try:
            loc.style.format(template, _sample_args(template))
        except (KeyError, IndexError, ValueError) as err:
            pytest.fail(f"{code}.toml {key}: {err!r} in {template!r}")


def test_every_literal_key_the_code_asks_for_exists() -> None:
    """t("some_key", ...) with no such key shows the key itself on the page: catch it here."""
    root = languages.LOCALES_DIR.parents[2]
    keys = set(i18n.LOCALES[i18n.DEFAULT_LANG].strings)
    ui_call = re.compile(r"""\b(?:t|tt)\(\s*["']([A-Za-z0-9_]+)["']\s*[,)]""")
    engine_call = re.compile(r"""\b(?:MpdemoError|ConfigError|Note)\(\s*["']([A-Za-z0-9_]+)["']""")
    missing = []
    for path in sorted((root / "mpdemo").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        missing += [f"{path.name}: {k}" for k in ui_call.findall(text) if k not in keys]
        missing += [f"{path.name}: {k}" for k in engine_call.findall(text) if k not in EN_MESSAGES]
    assert not missing, missing


# Words of the English rules and messages a Spanish or Portuguese page must not show.
ENGLISH_WORDS = re.compile(r"\b(must|whole number|number above|non-empty|got|from \d)\b")


def _refusal(**change: object) -> Exception:
    from mpdemo.config import Limits, RunConfig
    from mpdemo.messages import ConfigError

    with pytest.raises(ConfigError) as info:
        RunConfig(**change).validate(Limits())
    return info.value


def test_a_refused_number_reads_wholly_in_the_pages_language() -> None:
    err = _refusal(steps=0)
    # The control by its label, the rule in Spanish, numbers the Spanish way.
    es = i18n.error_text(err, "es")
    assert es == "Pasos debe ser un número entero de 1 a 20.000; se recibió 0", es
    pt = i18n.error_text(err, "pt")
    assert pt == "Passos deve ser um número inteiro de 1 a 20.000; recebido 0", pt
    assert i18n.error_text(err, "en") == "Steps must be a whole number from 1 to 20,000; got 0"
    # A refused decimal is written with the language's decimal mark too.
    lr = i18n.error_text(_refusal(lr=-1.5), "es")
    assert lr.startswith("Tasa de aprendizaje debe ser") and "-1,5" in lr, lr


@pytest.mark.parametrize(
    "change",
    [
        {"steps": 0},
        {"batch_size": 0},
        {"lr": 0.0},
        {"seed": -1},
        {"init_scale": 0.0},
        {"growth_interval": 0},
        {"max_length": 1},
        {"warmup_steps": -1},
        {"train_slice": " "},
        {"eval_slice": "x" * 600},
        {"loss_scaling": "maybe"},
        {"device": "tpu"},
    ],
    ids=lambda c: next(iter(c)),
)
@pytest.mark.parametrize("lang", ["es", "pt"])
def test_no_refused_input_is_half_english(change: dict, lang: str) -> None:
    from mpdemo.ui.train import controls

    err = _refusal(**change)
    text = i18n.error_text(err, lang)
    assert not ENGLISH_WORDS.search(text), text
    name = next(iter(change))
    if name in controls.BY_NAME:  # a control of the Train tab: named by its label there
        assert text.startswith(i18n.t(controls.BY_NAME[name].label, lang)), text
        assert not text.startswith(name), text


def test_the_cli_keeps_the_engines_english_with_the_field_name() -> None:
    # mpdemo/cli/main.py prints str(err): the engine's English, naming the flag's field.
    assert str(_refusal(steps=0)) == "steps must be a whole number from 1 to 20,000; got 0"
    assert str(_refusal(lr=0.0)) == "lr must be a number above 0 and at most 100; got 0.0"
    assert str(_refusal(train_slice="")) == "train_slice must be a non-empty text; got ''"


def test_the_catalogs_descriptions_are_in_every_language() -> None:
    # The dropdowns said "BERT-style classifier, 2 layers x 64" on the Spanish page.
    from mpdemo.catalog import DATASETS, MODELS
    from mpdemo.ui.train.controls import catalog_key, dataset_choices, model_choices

    for lang in i18n.LANGS:
        assert [v for _, v in model_choices(lang)] == list(MODELS)
        assert [v for _, v in dataset_choices(lang)] == list(DATASETS)
    for prefix, table in (("model_desc_", MODELS), ("data_desc_", DATASETS)):
        for name in table:
            assert i18n.t(catalog_key(prefix, name), "en") != catalog_key(prefix, name)
    assert "clasificador tipo BERT, 2 capas × 64 (191.874 parámetros)" in model_choices("es")[0][0]
