from annotation.items.diff import diff_text, diff_versions


def ops(segments):
    return [(s.op, s.text) for s in segments]


def test_english_diff_works_on_whole_words():
    segments = diff_text("She feels quite sad today.", "She feels very sad today.", "en")
    assert ops(segments) == [
        ("equal", "She feels "),
        ("delete", "quite"),
        ("insert", "very"),
        ("equal", " sad today."),
    ]


def test_chinese_diff_works_on_characters():
    segments = diff_text("她今天很难过。", "她今天有点难过。", "zh")
    assert ops(segments) == [("equal", "她今天"), ("delete", "很"), ("insert", "有点"), ("equal", "难过。")]


def test_version_diff_marks_only_changed_fields():
    old = {"context": "c", "question": "q", "options": ["a", "b"], "answer": 0}
    new = {"context": "c", "question": "q2", "options": ["a", "b", "c"], "answer": 1}
    rows = {row["field"]: row["changed"] for row in diff_versions("mcq", old, new, "en")}
    assert rows == {
        "context": False,
        "question": True,
        "option A": False,
        "option B": False,
        "option C": True,
        "answer": True,
    }
