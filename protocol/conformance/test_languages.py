"""Languages per model, end to end with the default model.

model/status lists the output languages the model writes well and where that came from
(the config file, the model file's general.languages, else Parlance's fixed table). A
request for another language falls back to one of them, reported in fallbackFrom, unless
it says languageFallback: keep: then it is written as asked and provenance.languageRisk
says so. The config file's `languages` for a model win over its file's.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Callable, Dict, List

import support
from parlance_client import ParlanceClient
from support import expect_error, check_error

Spawn = Callable[..., ParlanceClient]

TEXT = ("We have to move the launch to March because the battery tests failed twice. "
        "Marketing needs the new date by Friday.")


def covered(tag: str, writes_well: List[str]) -> bool:
    return tag in writes_well or tag.split("-")[0] in writes_well


def compose(c: ParlanceClient, **params: Any) -> Dict[str, Any]:
    p: Dict[str, Any] = {"text": TEXT, "tones": ["formal"], "audience": "team", "maxTokens": 48, "seed": 3, "temperature": 0}
    p.update(params)
    return c.request("compose/variations", p)


def test_status_lists_languages_and_keep_writes_the_language_asked(spawn: Spawn, spec: Dict[str, Any]) -> None:
    c = spawn()
    langs = c.request("model/status")["languages"]
    assert langs["source"] in ("config", "gguf", "default"), langs
    assert langs["writesWell"] and all(t == t.lower() for t in langs["writesWell"]), langs
    # A language the model does not write: the first of these it does not list.
    asked = next(t for t in ("sv", "fi", "is", "et") if not covered(t, langs["writesWell"]))

    fell = compose(c, language=asked)
    assert fell["fallbackFrom"] == asked, fell
    assert fell["language"] != asked and covered(fell["language"], langs["writesWell"]), (fell["language"], langs)
    assert "languageRisk" not in fell["provenance"], fell["provenance"]
    same = compose(c, language=asked, languageFallback="fallback")
    assert (same["language"], same["fallbackFrom"]) == (fell["language"], asked), "fallback is the default"

    kept = compose(c, language=asked, languageFallback="keep")
    assert kept["language"] == asked and "fallbackFrom" not in kept, kept
    risk = kept["provenance"]["languageRisk"]
    assert risk["language"] == asked and risk["fallbackWouldUse"] == fell["language"], risk
    assert risk["source"] == langs["source"] and asked in risk["message"], risk

    # keep where nothing falls back changes nothing and reports no risk.
    own = compose(c, language=langs["writesWell"][0], languageFallback="keep")
    assert "fallbackFrom" not in own and "languageRisk" not in own["provenance"], own

    # A document method too: ask/stream keeps the language and says the risk.
    uri = "file:///languages.txt"
    c.request("document/open", {"uri": uri, "text": support.SAMPLE_TEXT})
    answer = c.request("ask/stream", {"uri": uri, "question": "When does the launch happen?", "language": asked,
                                      "languageFallback": "keep", "maxTokens": 64, "temperature": 0})
    assert answer["language"] == asked and answer["provenance"]["languageRisk"]["language"] == asked, answer

    # An unknown value is refused with where and what is allowed.
    e = expect_error(c, "analysis/summarize", {"text": support.SAMPLE_TEXT, "language": asked, "languageFallback": "always"})
    check_error(spec, e, -32602)
    assert e.data["path"] == "languageFallback" and e.data["keyword"] == "enum", e.data
    assert "fallback" in e.message and "keep" in e.message, e.message
    c.close(timeout=60)


def test_the_config_file_says_what_a_model_writes(spawn: Spawn) -> None:
    root = tempfile.mkdtemp(prefix="parlance-languages-")
    config = os.path.join(root, "config.json")
    with open(config, "w") as f:
        json.dump({"models": {"nordic": {"path": support.model_path(), "languages": ["SV", "en"]}}}, f)
    c = spawn("--config", config)
    assert c.request("model/status")["languages"] == {"writesWell": ["sv", "en"], "source": "config"}
    r = compose(c, language="sv-SE")
    assert r["language"] == "sv-se" and "fallbackFrom" not in r and "languageRisk" not in r["provenance"], r
    fi = compose(c, language="fi")
    assert fi["fallbackFrom"] == "fi" and fi["language"] == "en-gb", "not listed: the table's choice, which the model writes"
    c.close(timeout=60)
