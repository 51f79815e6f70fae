"""Synthetic bilingual scenario texts and paraphrases, for measuring near-duplicate detection (pure).

``scenarios`` writes English and Chinese scenario texts shaped like bank items (a few sentences of context and a
question from a handful of templates) from parts drawn independently, with a long tail of rare words, so that two
items seldom share a sentence, as in a real bank. ``paraphrase`` edits a text token by token (English words, Chinese
characters) with a given strength, from a light touch to a rewrite, so that a text and its paraphrase cover the
whole range of similarity around the near-duplicate threshold. Seeds make both repeatable.
"""

import math
import random
import re


def _split(words: str, sep: str = "|") -> list[str]:
    return words.split(sep)


NAMES = {
    "en": _split(
        "Mia|Noah|Aisha|Liam|Chloe|Ethan|Priya|Lucas|Sofia|Omar|Grace|Mateo|Hana|Jonas|Leila|Ravi|Elena|Tom|Yara|Felix|"
        "Nadia|Owen|Sara|Kenji|Amara|Diego|Ines|Hugo|Zoe|Malik|Ivy|Arjun|Clara|Samir|Lena|Marco|Ada|Tariq|Nora|Ben"
    ),
    "zh": _split("陈|王|李|张|刘|杨|黄|赵|吴|周|徐|孙|马|朱|胡|郭|何|高|林|罗|郑|梁|谢|宋|唐|许|韩|冯|邓|曹"),
}
SURNAMES = _split(
    "Chen|Garcia|Okafor|Novak|Singh|Rossi|Kim|Haddad|Larsen|Moreau|Silva|Tanaka|Petrov|Mensah|Cohen|Walsh|Lopez|"
    "Nguyen|Fischer|Ahmed|Brown|Dubois|Costa|Yilmaz|Berg|Kowalski|Murphy|Sato|Reyes|Adeyemi"
)
GIVEN_ZH = "伟芳娜敏静丽强磊洋艳勇军杰娟涛明超秀霞平刚英华玉萍红梅鹏飞晨欣怡佳婷浩然宇轩"
TIMES = {
    "en": _split(
        "On Monday morning|Last Friday|That afternoon|Two days before the holiday|Early on Sunday|Just before midnight|"
        "At the end of the month|During the summer break|On the first day of term|After lunch|Three weeks ago|"
        "On a rainy Tuesday|The night before the exam|At the start of spring|Right after the meeting"
    ),
    "zh": _split(
        "周一早上|上周五|那天下午|假期前两天|周日一大早|快到午夜时|月底|暑假期间|开学第一天|午饭后|三周前|一个下雨的周二|"
        "考试前一晚|初春时|会议刚结束"
    ),
}
OTHERS = {
    "en": _split(
        "her brother|his sister|a close friend|her manager|his roommate|an old classmate|her neighbour|his coach|"
        "her grandmother|a new colleague|his teacher|her partner|a stranger on the bus|his best friend|her cousin|"
        "the team leader|his landlord|a former teammate|her daughter|his father"
    ),
    "zh": _split(
        "她的哥哥|他的姐姐|一位好友|她的经理|他的室友|一位老同学|她的邻居|他的教练|她的奶奶|一位新同事|他的老师|"
        "她的伴侣|公交车上的陌生人|他最好的朋友|她的表妹|团队负责人|他的房东|一位前队友|她的女儿|他的父亲"
    ),
}
PLACES = {
    "en": _split(
        "at the office|in the school library|at a family dinner|on the train home|at the hospital|in a crowded cafe|"
        "at a birthday party|during a team meeting|at the airport|in the park|at the supermarket|after the concert|"
        "in the group chat|at the gym|on a video call|at the wedding|in the waiting room|at the bus stop"
    ),
    "zh": _split(
        "在办公室里|在学校图书馆|在家庭聚餐上|在回家的火车上|在医院里|在拥挤的咖啡馆|在生日聚会上|在团队会议中|在机场|"
        "在公园里|在超市|音乐会结束后|在群聊里|在健身房|在视频通话中|在婚礼上|在候诊室|在公交站"
    ),
}
THINGS = {
    "en": _split(
        "a handwritten letter|the final exam results|an expensive watch|a job offer|the old family photos|"
        "a broken phone|the project report|a surprise gift|the rent money|a lost wallet|the team trophy|"
        "a borrowed bicycle|the wedding invitation|a rejected application|the medical test results|a promotion letter"
    ),
    "zh": _split(
        "一封手写信|期末考试成绩|一块昂贵的手表|一份工作邀请|家里的老照片|一部摔坏的手机|项目报告|一份惊喜礼物|房租|"
        "一个丢失的钱包|团队奖杯|一辆借来的自行车|婚礼请柬|一份被拒绝的申请|体检结果|一封升职信"
    ),
}
ACTIONS = {
    "en": _split(
        "forgot about|found|lost|received|broke|hid|returned|sold|gave away|opened|read|photographed|repaired|"
        "threw away|wrapped|borrowed|painted|signed|framed|copied|carried|shared|locked away|dropped|described|"
        "tore up|reread|cleaned|counted|checked"
    ),
    "zh": _split(
        "忘了|找到了|弄丢了|收到了|弄坏了|藏起了|归还了|卖掉了|送走了|打开了|读了|拍下了|修好了|扔掉了|包好了|借走了|画了|"
        "签了|装裱了|复印了|带走了|分享了|锁起了|掉落了|描述了|撕碎了|重读了|擦干净了|数了|检查了"
    ),
}
REASONS = {
    "en": _split(
        "because nobody else would|without telling anyone|to make a point|as a favour|for the last time|out of habit|"
        "in a hurry|after a long argument|while everyone watched|hoping it would help|despite the rain|"
        "against all advice|with shaking hands|to keep a promise|before it was too late"
    ),
    "zh": _split(
        "因为没有别人愿意|没有告诉任何人|为了表明态度|算是帮个忙|这是最后一次|出于习惯|匆匆忙忙地|在一场长时间的争吵之后|"
        "在众人的注视下|希望这能有所帮助|尽管下着雨|不顾所有人的劝告|双手颤抖着|为了信守承诺|趁还来得及"
    ),
}
EVENTS = {
    "en": [
        "{name} had been waiting for weeks to hear about {thing}.",
        "{other} told {name} the news {place}.",
        "{name} found {thing} {place} and did not know what to do with it.",
        "When {name} arrived {place}, {other} was already there.",
        "{other} promised to help {name} with {thing} but never showed up.",
        "{name} practised for months, hoping that {other} would finally notice.",
        "Everyone {place} started laughing when {name} walked in.",
        "{name} had lent {thing} to {other} and it came back damaged.",
        "{other} forgot that {name} had asked for help with {thing}.",
        "Late in the evening, {name} received a message from {other}.",
        "{name} overheard {other} talking about {thing} {place}.",
        "After years of saving, {name} could finally afford {thing}.",
        "{other} gave {name} {thing} without saying a word.",
        "{name} was the only one {place} who had not been invited.",
        "For the first time, {other} asked {name} for advice.",
        "{name} stayed up all night to finish {thing} before the deadline.",
        "{other} took credit for the work {name} had done on {thing}.",
        "{name} met {other} again {place} after ten years apart.",
        "{name} noticed that {other} had quietly paid for {thing}.",
        "A neighbour told {name} that {other} had been crying {place}.",
        "{name} volunteered to organise {thing}, although nobody else seemed to care.",
        "{other} laughed at the idea, so {name} kept {thing} a secret.",
        "The doctor asked {name} to wait {place} until {other} arrived.",
        "{name} missed the last bus and had to call {other}.",
        "{other} moved to another city without telling {name}.",
        "{name} was praised in front of everyone {place}.",
        "{name} lost {thing} on the way home and searched for hours.",
        "{other} asked to borrow money from {name} for the third time this year.",
        "{name} was chosen to give a speech {place}.",
        "{other} posted a photo of {thing} online without asking {name}.",
    ],
    "zh": [
        "{name}等了好几个星期，一直在等{thing}的消息。",
        "{other}{place}把这个消息告诉了{name}。",
        "{name}{place}发现了{thing}，不知道该怎么办。",
        "{name}到达时，{other}已经{place}等着了。",
        "{other}答应帮{name}处理{thing}，却始终没有出现。",
        "{name}练习了好几个月，希望{other}终于能注意到。",
        "{name}一走进来，{place}的所有人都笑了起来。",
        "{name}把{thing}借给了{other}，还回来时已经坏了。",
        "{other}忘了{name}曾经请求帮忙处理{thing}。",
        "深夜，{name}收到了{other}发来的消息。",
        "{name}{place}无意中听到{other}在谈论{thing}。",
        "攒了好几年的钱，{name}终于买得起{thing}了。",
        "{other}一句话也没说，就把{thing}交给了{name}。",
        "{place}只有{name}一个人没有被邀请。",
        "{other}第一次向{name}征求意见。",
        "为了在截止日期前完成{thing}，{name}熬了一整夜。",
        "{other}把{name}在{thing}上的功劳据为己有。",
        "分开十年后，{name}{place}再次遇见了{other}。",
        "{name}发现{other}悄悄为{thing}付了钱。",
        "一位邻居告诉{name}，{other}{place}哭过。",
        "{name}主动提出筹备{thing}，尽管别人似乎都不在乎。",
        "{other}嘲笑了这个想法，于是{name}把{thing}藏在了心里。",
        "医生让{name}{place}等着，直到{other}赶来。",
        "{name}错过了末班车，只好打电话给{other}。",
        "{other}搬去了另一个城市，却没有告诉{name}。",
        "{name}{place}当着所有人的面受到了表扬。",
        "{name}在回家路上弄丢了{thing}，找了好几个小时。",
        "这已经是今年第三次{other}向{name}借钱了。",
        "{name}被选中{place}发表讲话。",
        "{other}没有征得{name}同意，就把{thing}的照片发到了网上。",
    ],
}
REACTIONS = {
    "en": [
        "{name} smiled but said nothing.",
        "{name} quickly changed the subject.",
        "{name} went home early without explaining why.",
        "{name} thanked everyone and then sat alone for a while.",
        "{name} laughed louder than anyone else.",
        "{name}'s hands were shaking as the conversation went on.",
        "{name} kept checking the phone for the rest of the day.",
        "{name} hugged {other} for a long time.",
    ],
    "zh": [
        "{name}笑了笑，什么也没说。",
        "{name}很快转移了话题。",
        "{name}没有解释原因就提前回家了。",
        "{name}向大家道了谢，然后独自坐了很久。",
        "{name}笑得比谁都大声。",
        "谈话继续时，{name}的手一直在发抖。",
        "那天剩下的时间里，{name}一直在看手机。",
        "{name}和{other}拥抱了很久。",
    ],
}
QUESTIONS = {
    "en": [
        "What does {name} most likely feel?",
        "What emotion would {name} ultimately feel in this situation?",
        "Why would {name} feel this way?",
        "In this scenario, what is the most effective response for {name}?",
    ],
    "zh": [
        "{name}最可能有什么感受？",
        "在这种情况下，{name}最终会感受到什么情绪？",
        "{name}为什么会有这样的感受？",
        "在这个场景中，{name}最有效的回应是什么？",
    ],
}


DETAILS = {
    "en": [
        "{name} kept thinking about the {0} {1} and the {2} by the window.",
        "Nobody mentioned the {0}, but {name} could not forget the {1} {2}.",
        "There was a {0} {1} on the table, next to a {2}.",
    ],
    "zh": [
        "{name}一直想着那个{0}{1}和窗边的{2}。",
        "没有人提起{0}，但{name}忘不了那{1}{2}。",
        "桌上放着一个{0}{1}，旁边还有一个{2}。",
    ],
}
_SLOTS = {"other": OTHERS, "place": PLACES, "thing": THINGS, "time": TIMES, "action": ACTIONS, "reason": REASONS}
# Made-up words (rare characters in Chinese) drawn with Zipf-like frequencies give the long tail of real text:
# without it every shingle would come from a short list and unrelated items would look alike.
_VOCABULARY_SIZE = 5000


def _vocabulary(language: str) -> list[str]:
    rng = random.Random(language)
    if language == "zh":
        return ["".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(2)) for _ in range(_VOCABULARY_SIZE)]
    onsets = _split("b c d f g h j k l m n p r s t v w z br cl dr gr pl st tr", " ")
    syllable = [onset + vowel + coda for onset in onsets for vowel in "aeiou" for coda in ("", "n", "r", "s", "l")]
    return ["".join(rng.choice(syllable) for _ in range(rng.randint(1, 3))) for _ in range(_VOCABULARY_SIZE)]


_WORDS = {language: _vocabulary(language) for language in ("en", "zh")}


def _zipf(rng: random.Random) -> int:
    # Log-uniform: the word of rank r comes up with probability about 1 / (r ln V), Zipf's law.
    return min(int(math.exp(rng.random() * math.log(_VOCABULARY_SIZE + 1))) - 1, _VOCABULARY_SIZE - 1)


def scenarios(n: int, *, seed: int = 0) -> list[dict[str, str]]:
    """Return ``n`` items as {"en": text, "zh": text}, the two languages built from the same choices."""
    rng = random.Random(seed)
    return [_scenario(rng) for _ in range(n)]


def _scenario(rng: random.Random) -> dict[str, str]:
    person = (rng.randrange(len(NAMES["en"])), rng.randrange(len(NAMES["zh"])), rng.randrange(len(SURNAMES)))
    given = (rng.randrange(len(GIVEN_ZH)), rng.randrange(len(GIVEN_ZH)), rng.randrange(len(_WORDS["en"])))
    coined = rng.random() < 0.8
    event = rng.randrange(len(EVENTS["en"])) if rng.random() < 0.6 else None
    parts = [
        {slot: rng.randrange(len(pool["en"])) for slot, pool in _SLOTS.items()}
        | {"when": rng.random() < 0.4, "why": rng.random() < 0.5, "word": _zipf(rng)}
        for _ in range(rng.randint(1, 3))
    ]
    details = [
        (rng.randrange(len(DETAILS["en"])), _zipf(rng), _zipf(rng), _zipf(rng)) for _ in range(rng.randint(1, 2))
    ]
    reaction, question = rng.randrange(len(REACTIONS["en"])), rng.randrange(len(QUESTIONS["en"]))
    item = {}
    for lang in ("en", "zh"):
        if lang == "en":
            # Most people get a name of their own, as in a real bank where names seldom repeat.
            first = _WORDS["en"][given[2]].capitalize() if coined else NAMES["en"][person[0]]
            name = f"{first} {SURNAMES[person[2]]}"
        else:
            first = GIVEN_ZH[given[0]] + GIVEN_ZH[given[1]]
            name = NAMES["zh"][person[1]] + first
        sentences = []
        if event is not None:
            fill = {slot: pool[lang][parts[0][slot]] for slot, pool in _SLOTS.items()}
            sentences.append(EVENTS[lang][event].format(name=name, **fill))
        sentences += [_composed(lang, name, part) for part in parts]
        for frame, *words in details:
            sentences.append(DETAILS[lang][frame].format(*(_WORDS[lang][w] for w in words), name=first))
        sentences.append(REACTIONS[lang][reaction].format(name=first, other=OTHERS[lang][parts[-1]["other"]]))
        text = (" " if lang == "en" else "").join(x[0].upper() + x[1:] for x in sentences)
        item[lang] = text + "\n" + QUESTIONS[lang][question].format(name=first)
    return item


def _composed(lang: str, name: str, part: dict) -> str:
    when, place = TIMES[lang][part["time"]], PLACES[lang][part["place"]]
    action, reason = ACTIONS[lang][part["action"]], REASONS[lang][part["reason"]]
    thing, word = THINGS[lang][part["thing"]], _WORDS[lang][part["word"]]
    if lang == "en":
        sentence = f"{name} {action} {thing} and the {word} {place}"
        sentence = f"{when}, {sentence}" if part["when"] else sentence
        return sentence + (f", {reason}." if part["why"] else ".")
    sentence = f"{name}{place}{'，' + reason + '，' if part['why'] else ''}{action}{thing}和{word}。"
    return f"{when}，{sentence}" if part["when"] else sentence


_TOKEN = {"en": re.compile(r"\S+"), "zh": re.compile(r"\s+|.")}
_INSERTED = {
    "en": _split("really just also quite then still very even so perhaps suddenly", " "),
    "zh": list("的了很也都还就又在是不有着把被给让对"),
}


def paraphrase(text: str, language: str, *, strength: float, seed: int = 0) -> str:
    """Return ``text`` with about ``strength`` of its tokens edited (deleted, replaced, inserted or swapped)."""
    rng = random.Random(seed)
    lang = "zh" if language == "zh" else "en"
    tokens = _TOKEN[lang].findall(text)
    pool = tokens[:] or [""]
    for _ in range(round(strength * len(tokens))):
        if not tokens:
            break
        i = rng.randrange(len(tokens))
        edit = rng.random()
        if edit < 0.3:
            del tokens[i]
        elif edit < 0.6:
            tokens[i] = rng.choice(pool) if rng.random() < 0.5 else rng.choice(_INSERTED[lang])
        elif edit < 0.8:
            tokens.insert(i, rng.choice(_INSERTED[lang]))
        elif i + 1 < len(tokens):
            tokens[i], tokens[i + 1] = tokens[i + 1], tokens[i]
    return ("" if lang == "zh" else " ").join(tokens)
