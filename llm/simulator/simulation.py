"""What the local simulator answers: deterministic replies per (seed, model, request), no I/O, no database.

The model name chooses the role (see docs/llm.md):

- ``sim-mcq-accNN``: answers multiple-choice prompts, right NN% of the time (told the key by ``X-Sim-Answer``).
- ``sim-style-template`` / ``sim-style-list`` / ``sim-style-concise``: free-text replies in one style.
- ``sim-judge[-noiseN][-biasN|-biasmN][-tieN]``: pairwise judge preferring the reply with the higher hidden
  quality score, with Gaussian noise (N points), a position bias towards A (or B with ``m``) and a tie band.
- ``sim-drafter``: candidate items as JSON (EiCAP reply sets too: ``llm.simulator.replysets``).
- ``sim-echo``: repeats the last user message.
- any other ``sim-*``: a concise reply.
"""

import hashlib
import json
import random
import re
from dataclasses import dataclass

from llm.parsers import BYTES_PREFIX
from llm.simulator import replysets
from llm.simulator.replies import style_reply

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
TOKEN_RE = re.compile(rf"\s*[{CJK}]|\s*[A-Za-z]+|\s*\d{{1,3}}|\s*\S|\s+")
WORD_RE = re.compile(rf"[{CJK}]|[A-Za-z']+")
OPTION_RE = re.compile(r"^\s*\(?([A-L])[\.\)\:：、]\s*(.+?)\s*$", re.MULTILINE)
MESSAGE_OVERHEAD_TOKENS = 4

TEMPLATE_PHRASES_EN = (
    "i'm really sorry to hear",
    "i'm sorry to hear",
    "it's completely understandable",
    "it's important to",
    "remember,",
    "you're not alone",
    "i hope this helps",
    "take care of yourself",
    "reach out to",
    "it's okay to feel",
)
TEMPLATE_PHRASES_ZH = (
    "听到你",
    "完全可以理解",
    "很重要",
    "记住",
    "你并不孤单",
    "希望这对你有帮助",
    "照顾好自己",
    "寻求帮助",
)


def tokenize(text: str) -> list[str]:
    """Split text into tokens whose concatenation is the text (a word, a CJK character or a symbol each)."""
    return TOKEN_RE.findall(text)


def count_tokens(text: str) -> int:
    return len(tokenize(text))


def is_chinese(text: str) -> bool:
    """Return whether the text is mostly Chinese (more CJK characters than Latin words)."""
    cjk = len(re.findall(rf"[{CJK}]", text))
    latin = len(re.findall(r"[A-Za-z]+", text))
    return cjk > latin


def rng_for(*parts: object) -> random.Random:
    """Return a random generator seeded by the given parts (stable across processes and runs)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def unit_hash(*parts: object) -> float:
    """Return a number in [0, 1) derived deterministically from the parts."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def truncate_tokens(text: str, limit: int) -> tuple[str, bool]:
    """Return the first ``limit`` tokens of the text and whether anything was cut."""
    tokens = tokenize(text)
    if len(tokens) <= limit:
        return text, False
    return "".join(tokens[:limit]), True


# --- roles ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Role:
    kind: str  # mcq, style, judge, drafter, echo, generic
    accuracy: float = 0.0
    style: str = "concise"
    noise: float = 8.0
    bias: float = 0.0
    tie: float = 3.0


def role_for(model: str) -> Role | None:
    """Return the role a simulated model name plays, or None when the simulator does not know the model."""
    name = model.strip().lower()
    if not name.startswith("sim-"):
        return None
    if m := re.fullmatch(r"sim-mcq-acc(\d{1,3})", name):
        return Role("mcq", accuracy=min(int(m.group(1)), 100) / 100)
    if name.startswith("sim-mcq"):
        return Role("mcq", accuracy=0.7)
    if m := re.fullmatch(r"sim-style-(template|list|concise)", name):
        return Role("style", style=m.group(1))
    if name == "sim-judge" or name.startswith("sim-judge-"):
        noise = re.search(r"noise(\d+)", name)
        bias = re.search(r"bias(m?)(\d+)", name)
        tie = re.search(r"tie(\d+)", name)
        return Role(
            "judge",
            noise=float(noise.group(1)) if noise else 8.0,
            bias=(-1 if bias and bias.group(1) else 1) * float(bias.group(2)) if bias else 0.0,
            tie=float(tie.group(1)) if tie else 3.0,
        )
    if name.startswith("sim-drafter"):
        return Role("drafter")
    if name == "sim-echo":
        return Role("echo")
    return Role("generic")


# --- the hidden quality of a free-text reply ----------------------------------------------------------------


def quality_score(text: str) -> float:
    """Score a reply from 0 to 100 the way simulated judges do: stock phrases, lists and padding cost points."""
    lowered = text.lower()
    words = WORD_RE.findall(text)
    n_words = len(words)
    score = 72.0
    stock = sum(lowered.count(p) for p in TEMPLATE_PHRASES_EN) + sum(text.count(p) for p in TEMPLATE_PHRASES_ZH)
    score -= min(stock * 7.0, 42.0)
    lines = [line for line in text.splitlines() if line.strip()]
    bullets = sum(1 for line in lines if re.match(r"^\s*(?:[-*•]|\d+[.)、])\s+", line))
    if lines:
        score -= 28.0 * bullets / len(lines)
    if n_words < 12:
        score -= 12.0
    elif n_words > 180:
        score -= min((n_words - 180) / 8.0, 20.0)
    if n_words:
        distinct = len({w.lower() for w in words}) / n_words
        score += 10.0 * (distinct - 0.6)
    score += (unit_hash("quality", text) - 0.5) * 8.0
    return max(0.0, min(100.0, score))


# --- prompts --------------------------------------------------------------------------------------------------


def extract_options(text: str) -> list[tuple[str, str]]:
    """Return the lettered options (A-L) listed on their own lines, in order, without repeats."""
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for letter, body in OPTION_RE.findall(text):
        if letter not in seen:
            seen.add(letter)
            found.append((letter, body))
    expected = "ABCDEFGHIJKL"[: len(found)]
    if "".join(letter for letter, _ in found) != expected:
        return []
    return found


PAIR_PATTERNS = (
    re.compile(
        r"\[The Start of Assistant A's Answer\](.*?)\[The End of Assistant A's Answer\].*?"
        r"\[The Start of Assistant B's Answer\](.*?)\[The End of Assistant B's Answer\]",
        re.DOTALL | re.IGNORECASE,
    ),
    re.compile(r"<response_a>(.*?)</response_a>.*?<response_b>(.*?)</response_b>", re.DOTALL | re.IGNORECASE),
    re.compile(r"\[Response A\](.*?)\[End of Response A\].*?\[Response B\](.*?)\[End of Response B\]", re.DOTALL),
)


def extract_pair(text: str) -> tuple[str, str] | None:
    """Return the two responses of a pairwise judging prompt, or None if the prompt has no such pair."""
    for pattern in PAIR_PATTERNS:
        if m := pattern.search(text):
            return m.group(1).strip(), m.group(2).strip()
    return None


def key_phrase(text: str, rng: random.Random, chinese: bool) -> str:
    """Pick a content word (or a few CJK characters) from the prompt to make a reply specific."""
    if chinese:
        runs = [r for r in re.findall(rf"[{CJK}]{{2,}}", text) if len(r) >= 2]
        if not runs:
            return "这件事"
        run = rng.choice(runs)
        start = rng.randrange(max(len(run) - 3, 1))
        return run[start : start + 4]
    stop = {"about", "after", "again", "their", "there", "these", "which", "would", "could", "should", "today"}
    words = [w for w in re.findall(r"[A-Za-z]{5,}", text) if w.lower() not in stop]
    return rng.choice(words).lower() if words else "this"


def last_user_text(messages: list) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return content_text(message.get("content"))
    return content_text(messages[-1].get("content")) if messages and isinstance(messages[-1], dict) else ""


def content_text(content: object) -> str:
    """Return the text of a message content (a string, or a list of parts with ``text``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def prompt_text(messages: list) -> str:
    return "\n".join(content_text(m.get("content")) for m in messages if isinstance(m, dict))


def prompt_tokens(messages: list) -> int:
    return sum(count_tokens(content_text(m.get("content"))) + MESSAGE_OVERHEAD_TOKENS for m in messages) + 3


# --- replies --------------------------------------------------------------------------------------------------


def chat_reply(model: str, messages: list, *, seed: int, hints: dict | None = None) -> str:
    """Return the reply of simulated ``model`` to a chat request (deterministic for seed, model and messages)."""
    role = role_for(model) or Role("generic")
    hints = hints or {}
    full = prompt_text(messages)
    user = last_user_text(messages)
    rng = rng_for(seed, model, full, hints.get("answer", ""))
    chinese = is_chinese(full)
    if role.kind == "echo":
        return user
    if role.kind == "mcq":
        options = extract_options(user) or extract_options(full)
        if options:
            return mcq_reply(options, role.accuracy, rng, chinese, hints.get("answer"))
        return style_reply("concise", user, rng, chinese)
    if role.kind == "judge":
        pair = extract_pair(full)
        if pair is None:
            if chinese:
                return "我没有在提示中找到两个需要比较的回答。"
            return "I could not find two responses to compare in the prompt."
        return judge_reply(pair, role, rng, chinese)
    if role.kind == "drafter":
        return drafter_reply(full, rng, chinese)
    if role.kind == "style":
        return style_reply(role.style, user, rng, chinese)
    return style_reply("concise", user, rng, chinese)


def mcq_reply(
    options: list[tuple[str, str]], accuracy: float, rng: random.Random, chinese: bool, answer: object
) -> str:
    letters = [letter for letter, _ in options]
    correct = str(answer).strip().upper() if answer else ""
    if correct not in letters:
        # Without the key the model still answers consistently: a fixed, seeded pick.
        correct = rng.choice(letters)
    if rng.random() < accuracy or len(letters) == 1:
        chosen = correct
    else:
        chosen = rng.choice([letter for letter in letters if letter != correct])
    body = dict(options)[chosen]
    if chinese:
        return f"答案：{chosen}\n理由：选项{chosen}（{body}）最符合情境中人物的感受。"
    return f"Answer: {chosen}\nReason: option {chosen} ({body}) fits what the person in the scenario most likely feels."


MARGIN_STEPS = (8.0, 15.0, 25.0, 40.0)


def verdict_margin(difference: float, tie_band: float) -> int:
    """Return 0 for a tie, else 1 to 5 pluses for the absolute quality difference."""
    size = abs(difference)
    if size < tie_band:
        return 0
    return 1 + sum(1 for step in MARGIN_STEPS if size >= step)


def judge_reply(pair: tuple[str, str], role: Role, rng: random.Random, chinese: bool) -> str:
    first, second = pair
    q_a, q_b = quality_score(first), quality_score(second)
    difference = q_a - q_b + role.bias + rng.gauss(0.0, role.noise)
    margin = verdict_margin(difference, role.tie)
    winner = "TIE" if margin == 0 else ("A" if difference > 0 else "B")

    def describe(text: str) -> str:
        lowered = text.lower()
        stock = sum(lowered.count(p) for p in TEMPLATE_PHRASES_EN) + sum(text.count(p) for p in TEMPLATE_PHRASES_ZH)
        bullets = len(re.findall(r"^\s*(?:[-*•]|\d+[.)、])\s+", text, re.MULTILINE))
        if chinese:
            parts = []
            if stock:
                parts.append(f"使用了{stock}处套话")
            if bullets:
                parts.append(f"列了{bullets}条要点")
            return "，".join(parts) or "回应具体，贴近对方的处境"
        parts = []
        if stock:
            parts.append(f"leans on {stock} stock phrase{'s' if stock != 1 else ''}")
        if bullets:
            parts.append(f"lists {bullets} generic bullet point{'s' if bullets != 1 else ''}")
        return " and ".join(parts) or "engages with the specific situation"

    pluses = "+" * margin
    verdict = "[[TIE]]" if margin == 0 else f"[[{winner}]] {pluses}"
    if chinese:
        return f"分析：回答A{describe(first)}；回答B{describe(second)}。\n结论：{verdict}"
    return f"Reasoning: Response A {describe(first)}; Response B {describe(second)}.\nVerdict: {verdict}"


DRAFT_SCENARIOS_EN = (
    ("Lena's manager praised her project in front of the whole team, but she had done most of it alone.", "Pride"),
    ("Tom found out his closest friend moved abroad without telling him.", "Hurt"),
    ("After months of rehearsal, Aisha forgot her lines on opening night.", "Embarrassment"),
    ("Marco's grandmother, who raised him, was admitted to hospital overnight.", "Worry"),
    ("Jin received a scholarship she had stopped hoping for.", "Relief"),
    ("Sam's younger brother copied his essay and got a better grade.", "Resentment"),
)
DRAFT_SCENARIOS_ZH = (
    ("经理在全组面前表扬了莉娜的项目，但其实大部分工作是她一个人完成的。", "自豪"),
    ("汤姆发现最好的朋友出国了，却没有告诉他。", "受伤"),
    ("排练了几个月后，艾莎在首演之夜忘了台词。", "尴尬"),
    ("把马可带大的外婆连夜住进了医院。", "担忧"),
    ("小金得到了一份她早已不抱希望的奖学金。", "如释重负"),
    ("山姆的弟弟抄了他的作文，分数却比他高。", "怨恨"),
)
OTHER_EMOTIONS_EN = ("Joy", "Anger", "Fear", "Boredom", "Gratitude", "Guilt", "Surprise")
OTHER_EMOTIONS_ZH = ("喜悦", "愤怒", "恐惧", "无聊", "感激", "内疚", "惊讶")


def drafter_reply(prompt: str, rng: random.Random, chinese: bool) -> str:
    """Return candidate items as JSON: ``{"items": [...]}`` in the item content shape the prompt asks for (reply
    sets, ``{"reply_sets": [...]}``, for an EiCAP reply-set prompt)."""
    if replysets.is_reply_set_prompt(prompt):
        return replysets.reply_set_reply(prompt, rng, chinese)
    m = re.search(r"(\d{1,2})\s*(?:candidate\s+|new\s+|more\s+)?(?:items|questions|prompts|道|个|条)", prompt)
    count = max(1, min(int(m.group(1)) if m else 3, 20))
    lowered = prompt.lower()
    open_kind = "open_prompt" in lowered or "open prompt" in lowered or "开放" in prompt
    bilingual = '"en"' in prompt and '"zh"' in prompt
    items = []
    for i in range(count):
        index = rng.randrange(len(DRAFT_SCENARIOS_EN))
        languages = ("en", "zh") if bilingual else ("zh" if chinese else "en",)
        versions = {lang: _drafted_version(index, i, lang, open_kind=open_kind) for lang in languages}
        items.append(versions if bilingual else next(iter(versions.values())))
    return json.dumps({"items": items}, ensure_ascii=False, indent=2)


def _drafted_version(index: int, i: int, lang: str, *, open_kind: bool) -> dict:
    """Return the ``lang`` version of the ``i``-th drafted item, on draft scenario ``index``: an open prompt, or a
    multiple-choice question with the scenario's emotion among three others, in a drawn order."""
    scenarios = DRAFT_SCENARIOS_ZH if lang == "zh" else DRAFT_SCENARIOS_EN
    context, emotion = scenarios[index]
    if open_kind:
        return {"prompt": context}
    others = OTHER_EMOTIONS_ZH if lang == "zh" else OTHER_EMOTIONS_EN
    distractors = rng_for("distractors", index, i, lang).sample(others, 3)
    options = [emotion, *distractors]
    order = rng_for("order", index, i).sample(range(4), 4)
    options = [options[k] for k in order]
    question = "这个人最可能有什么感受？" if lang == "zh" else "What does the person most likely feel?"
    return {"context": context, "question": question, "options": options, "answer": options.index(emotion)}


def garble(text: str, rng: random.Random) -> str:
    """Return a truncated or scrambled version of a reply (an injected "unparseable content" fault)."""
    if rng.random() < 0.5 and len(text) > 8:
        return text[: max(len(text) // 3, 1)]
    return "".join(rng.sample(list("#%&*@~^<>|"), 6)) + " <<the model rambled off-format>>"


def garble_choices(payload: dict, rng: random.Random) -> None:
    """Garble the text of every choice of a reply in place (``garble``): a chat message's content, or a text."""
    for choice in payload.get("choices", []):
        if "message" in choice:
            choice["message"]["content"] = garble(choice["message"]["content"] or "", rng)
        else:
            choice["text"] = garble(choice["text"], rng)


# --- legacy completions with log-probabilities --------------------------------------------------------------

# Pre-tokens as GPT-2-style BPE tokenizers split text: a word, a number (up to 3 digits), a run of CJK characters
# or of punctuation, each with at most one leading space; whitespace on its own otherwise.
PRETOKEN_RE = re.compile(
    rf"'(?:s|t|re|ve|m|ll|d)\b| ?[A-Za-z]+| ?\d{{1,3}}| ?[{CJK}]+| ?[^\sA-Za-z\d{CJK}]+|\s+(?!\S)|\s+"
)
WORD_PIECE_LETTERS = 6
RARE_CJK_SHARE = 0.15  # CJK characters outside the simulated vocabulary: byte-fallback tokens
CJK_PAIR_SHARE = 0.4  # two common CJK characters that form one token


def bytes_token(data: bytes) -> str:
    """Return how servers report a token that is not valid UTF-8 on its own: ``bytes: \\xe5\\xbc``."""
    return BYTES_PREFIX + "".join(chr(b) if 0x20 <= b < 0x7F and b != 0x5C else f"\\x{b:02x}" for b in data)


def _cjk_pieces(run: str) -> list[tuple[str, bool]]:
    """Split a CJK pre-token (maybe with a leading space) into (text, rare) pieces: a character or a common pair."""
    space, chars = ("", run) if run[0] != " " else (" ", run[1:])
    pieces: list[tuple[str, bool]] = []
    i = 0
    while i < len(chars):
        char = chars[i]
        rare = unit_hash("rare-cjk", char) < RARE_CJK_SHARE
        pair = chars[i : i + 2]
        common_pair = len(pair) == 2 and unit_hash("rare-cjk", pair[1]) >= RARE_CJK_SHARE
        if not rare and common_pair and unit_hash("cjk-pair", pair) < CJK_PAIR_SHARE:
            pieces.append((pair, False))
            i += 2
            continue
        pieces.append((char, rare))
        i += 1
    first, first_rare = pieces[0]
    pieces[0] = (space + first, first_rare)
    return pieces


def logprob_tokens(text: str) -> tuple[list[str], list[int]]:
    """Tokenize text as a BPE server reports it with ``logprobs``; return the tokens and their ``text_offset``.

    English words carry their leading space (`` happy``) and long ones split into pieces of six letters; CJK
    runs give common two-character tokens, single characters, and rare characters as byte-fallback tokens
    (the first two UTF-8 bytes, with a leading space if any, then the last byte), reported as
    ``bytes:\\xe5\\xbc``. A token's offset is the number of characters of the text completed before it, so a
    partial token shares its offset with the token that completes its character, and decoding the tokens'
    bytes in order gives back the text.
    """
    tokens: list[str] = []
    offsets: list[int] = []
    position = 0
    for match in PRETOKEN_RE.finditer(text):
        pre = match.group()
        if re.fullmatch(rf" ?[{CJK}]+", pre):
            for piece, rare in _cjk_pieces(pre):
                if not rare:
                    tokens.append(piece)
                    offsets.append(position)
                    position += len(piece)
                    continue
                data = piece.encode("utf-8")
                tokens += [bytes_token(data[:-1]), bytes_token(data[-1:])]
                # The first token completes the leading space, if any; the character needs the second.
                offsets += [position, position + len(piece) - 1]
                position += len(piece)
        elif re.fullmatch(r" ?[A-Za-z]+", pre):
            start = 1 if pre[0] == " " else 0
            cuts = list(range(start + WORD_PIECE_LETTERS, len(pre), WORD_PIECE_LETTERS))
            for a, b in zip([0, *cuts], [*cuts, len(pre)], strict=True):
                tokens.append(pre[a:b])
                offsets.append(position + a)
            position += len(pre)
        else:
            tokens.append(pre)
            offsets.append(position)
            position += len(pre)
    return tokens, offsets


def token_logprob(model: str, seed: int, previous: str, token: str) -> float:
    """Return a stable pseudo log-probability in [-6, -0.05] for ``token`` after ``previous``."""
    return round(-0.05 - 5.95 * unit_hash(seed, model, previous, token) ** 2, 4)


def completion_reply(model: str, prompt: str, *, seed: int, max_tokens: int, echo: bool, logprobs: int | None) -> dict:
    """Return text, log-probabilities and token counts for a legacy completions request."""
    rng = rng_for(seed, model, prompt)
    continuation = ""
    if max_tokens > 0:
        words = re.findall(r"[A-Za-z]+", prompt) or ["and"]
        continuation = "".join(" " + rng.choice(words) for _ in range(max_tokens))
    prompt_toks, prompt_offsets = logprob_tokens(prompt)
    completion_toks, completion_offsets = logprob_tokens(continuation)
    if len(completion_toks) > max_tokens:
        continuation = continuation[: completion_offsets[max_tokens]]
        completion_toks, completion_offsets = completion_toks[:max_tokens], completion_offsets[:max_tokens]
    text = (prompt if echo else "") + continuation
    if echo:
        shown = prompt_toks + completion_toks
        offsets = prompt_offsets + [len(prompt) + o for o in completion_offsets]
    else:
        # As OpenAI does, offsets count from the start of the prompt even when it is not echoed.
        shown, offsets = completion_toks, [len(prompt) + o for o in completion_offsets]
    data: dict = {"text": text, "prompt_tokens": len(prompt_toks), "completion_tokens": len(completion_toks)}
    if logprobs is not None:
        data["logprobs"] = _logprobs(model, seed, shown, offsets, echo=echo)
    return data


def _logprobs(model: str, seed: int, shown: list[str], offsets: list[int], *, echo: bool) -> dict:
    """Return the ``logprobs`` of a completion: each token's log-probability given the one before (none for the
    first token of an echoed prompt), the same as its top alternative, and where each token starts."""
    values: list[float | None] = []
    previous = ""
    for index, token in enumerate(shown):
        values.append(None if echo and index == 0 else token_logprob(model, seed, previous, token))
        previous = token
    return {
        "tokens": shown,
        "token_logprobs": values,
        "top_logprobs": [None if v is None else {t: v} for t, v in zip(shown, values, strict=True)],
        "text_offset": offsets,
    }
