"""What ``sim-drafter`` answers to an EiCAP reply-set prompt: deterministic, plausible JSON in English and Chinese.

Each drafted dialogue has one or two user turns (turn 2 reframes turn 1); each turn gets three preferred replies that
stay close to what the person said and check tentatively, and three distractors of the same length and register
that subtly break the principle (projecting feelings, rushing to advice, dismissing; on turn 2, ignoring what turn 2
revealed). The researcher's own user turns, when the prompt carries them, are used verbatim.
"""

import json
import random
import re

# (turn 1, what turn 1 is about, turn 2 that reframes it, what turn 2 revealed), per language.
DIALOGUES_EN = (
    (
        "I finally finished the marathon I trained a whole year for, but I keep thinking about my dad.",
        "finishing the marathon",
        "He used to run with me. He died last spring, and today was the first race without him at the finish.",
        "your dad was not there at the finish",
    ),
    (
        "My team lead praised my report in front of everyone at the meeting today.",
        "the praise for your report",
        "The thing is, half of that report was my colleague's work, and nobody mentioned her at all.",
        "your colleague's part went unmentioned",
    ),
    (
        "I've been so tired lately that I can barely get through a workday.",
        "being this tired",
        "I think it started when my manager began checking every email I send and copying his boss in.",
        "your manager started checking every email",
    ),
    (
        "My best friend cancelled our trip two days before we were supposed to leave.",
        "the cancelled trip",
        "She just told me it's because she lost her job and couldn't afford it, and was too embarrassed to say.",
        "she lost her job and felt ashamed to tell you",
    ),
    (
        "I got into the graduate programme I applied for.",
        "getting into the programme",
        "It's on the other side of the country, and my mum has been unwell since the winter.",
        "your mum has been unwell",
    ),
    (
        "My neighbour has been playing loud music until two in the morning all week.",
        "the late-night music",
        "I found out today that his wife moved out last week. I think that's when the music started.",
        "his wife moved out",
    ),
)
DIALOGUES_ZH = (
    (
        "我终于跑完了准备了一整年的马拉松，可我一直在想我爸爸。",
        "跑完马拉松",
        "他以前总陪我跑步。他去年春天走了，今天是第一场终点没有他的比赛。",
        "终点没有爸爸",
    ),
    (
        "今天开会时，组长当着所有人的面表扬了我的报告。",
        "报告受到表扬",
        "问题是，那份报告有一半是同事做的，可没有人提到她。",
        "同事的付出没被提到",
    ),
    (
        "最近我累得几乎撑不过一个工作日。",
        "这么疲惫",
        "我觉得是从经理开始检查我发的每一封邮件、还抄送他的上司时开始的。",
        "经理开始检查每封邮件",
    ),
    (
        "我最好的朋友在出发前两天取消了我们的旅行。",
        "旅行被取消",
        "她刚告诉我，是因为她失业了付不起钱，又不好意思说。",
        "她失业了又羞于开口",
    ),
    (
        "我被申请的研究生项目录取了。",
        "被项目录取",
        "学校在国家的另一头，而我妈妈从冬天起身体就一直不好。",
        "妈妈身体不好",
    ),
    (
        "我邻居这一周每天都把音乐放到凌晨两点。",
        "深夜的音乐",
        "今天我才知道，他妻子上周搬走了。我想音乐就是从那时开始的。",
        "他妻子搬走了",
    ),
)

PREFERRED_EN = (
    (
        "It sounds like {topic} brings up more than one feeling at once. I might be wrong, but is part of it heavier "
        "than it looks from the outside? I'd like to hear what stands out most for you.",
        "names only what the message supports and checks it tentatively",
    ),
    (
        "Thank you for telling me about {topic}. From what you describe it seems to stay with you; would it help to "
        "talk through which part of it feels strongest right now?",
        "acknowledges the disclosure and lets the person lead",
    ),
    (
        "That is a lot to hold, with {topic}. I don't want to assume how it feels for you, so tell me if I'm off: "
        "it sounds both important and hard.",
        "stays close to what was said and leaves room for correction",
    ),
)
DISTRACTORS_EN = (
    (
        "It sounds like {topic} has left you completely devastated and furious underneath it all. Those feelings are "
        "clearly taking over, so that is what we should focus on now.",
        "projects intense emotions the person never expressed",
    ),
    (
        "Thank you for telling me about {topic}. Honestly, the best thing is to move on quickly: make a plan, keep "
        "yourself busy, and it will stop bothering you soon.",
        "rushes to advice and minimises the feeling",
    ),
    (
        "That is a lot to hold, with {topic}. Everyone goes through things like this, so it really isn't unusual; "
        "I'm sure you will be absolutely fine.",
        "generic reassurance that dismisses the person's experience",
    ),
)
REFRAMED_PREFERRED_EN = (
    (
        "Knowing that {revealed} changes how {topic} sounds. It makes sense if what you said earlier carries grief "
        "or unfairness as well; which part is on your mind most?",
        "integrates the new detail with the first turn",
    ),
    (
        "Thank you for adding that {revealed}. It puts {topic} in a different light, and I would rather not guess: "
        "how does it feel now that you've said it?",
        "lets turn 2 reframe turn 1 and checks rather than assumes",
    ),
    (
        "So {topic} came with something harder underneath: {revealed}. That is a lot at once, and it's fine if the "
        "feelings don't line up neatly.",
        "holds both turns together, including mixed feelings",
    ),
)
REFRAMED_DISTRACTORS_EN = (
    (
        "Knowing that, {topic} still sounds like a real achievement, and you should simply feel proud of it. Focus "
        "on the good part and enjoy the moment you earned.",
        "ignores what turn 2 revealed and keeps the first reading",
    ),
    (
        "Thank you for adding that. It sounds like {topic} is the main thing here, so let's plan your next step "
        "and leave the rest aside for another day.",
        "sets the reframing detail aside and jumps to planning",
    ),
    (
        "So {topic} is what happened. Things like this happen to everyone, and the new detail doesn't really "
        "change much; you'll feel better soon.",
        "dismisses the new information as irrelevant",
    ),
)

PREFERRED_ZH = (
    (
        "听起来，{topic}让你同时有好几种感受。我可能理解得不对：这件事是不是比外人看起来更沉重一些？我想听听你最在意的是什么。",
        "只说出消息能支持的感受，并试探性地确认",
    ),
    (
        "谢谢你愿意告诉我{topic}的事。从你的描述看，它一直压在你心上；要不要一起说说，现在哪一部分感觉最强烈？",
        "回应对方的倾诉，并让对方主导",
    ),
    (
        "{topic}，这确实不轻松。我不想替你决定你的感受，如果我说得不对请告诉我：这件事听起来既重要又艰难。",
        "贴近对方所说，并留出纠正的空间",
    ),
)
DISTRACTORS_ZH = (
    (
        "听起来，{topic}让你彻底崩溃，内心其实非常愤怒。这些情绪显然已经控制了你，我们现在就该专门处理它们。",
        "把对方从未表达的强烈情绪强加给对方",
    ),
    (
        "谢谢你愿意告诉我{topic}的事。说实话，最好的办法就是赶快放下：做个计划，让自己忙起来，很快就不会困扰你了。",
        "急于给建议，淡化对方的感受",
    ),
    (
        "{topic}，这确实不轻松。不过每个人都会遇到这种事，真的没什么特别的；我相信你一定会完全没事的。",
        "空泛的安慰，忽视了对方的亲身经历",
    ),
)
REFRAMED_PREFERRED_ZH = (
    (
        "知道{revealed}之后，{topic}听起来就不一样了。如果你之前说的话里也带着难过或不公平的感觉，那很正常；你现在最在意哪一部分？",
        "把新的细节和第一轮结合起来",
    ),
    (
        "谢谢你补充{revealed}。这让{topic}有了不同的意味，我不想乱猜：说出来之后，你现在感觉怎么样？",
        "让第二轮重新诠释第一轮，确认而不是假设",
    ),
    (
        "原来{topic}背后还有更难的事：{revealed}。一下子这么多，感受不那么一致也没关系。",
        "同时顾及两轮内容，包括复杂的感受",
    ),
)
REFRAMED_DISTRACTORS_ZH = (
    (
        "即便如此，{topic}仍然是一项了不起的成就，你只需要为此自豪。专注在好的部分，享受你应得的时刻吧。",
        "忽略第二轮揭示的信息，坚持最初的理解",
    ),
    ("谢谢你补充。听起来{topic}才是重点，我们来规划下一步吧，其他的以后再说。", "把重新诠释的细节放在一边，急于规划"),
    (
        "所以就是{topic}这件事。这种事每个人都会遇到，新的细节其实改变不了什么；你很快就会好起来的。",
        "把新信息当作无关紧要而忽视",
    ),
)

PRINCIPLE_RE = re.compile(r"principle '([^']+)'")
TURNS_RE = re.compile(r"dialogue of (\d) user turn")
COUNT_RE = re.compile(r"You draft (\d{1,2}) reply sets")
GIVEN_RE = re.compile(r"User turns \(JSON, use them verbatim\): (\[.*\])")


def is_reply_set_prompt(prompt: str) -> bool:
    return "of the kind reply_set" in prompt


def _topic(text: str, chinese: bool) -> str:
    """A short phrase of a given user turn, to make the replies specific."""
    if chinese:
        runs = re.findall(r"[\u4e00-\u9fff]{2,}", text)
        return runs[0][:6] if runs else "这件事"
    words = re.findall(r"[A-Za-z']+", text)
    return "what you said about " + " ".join(words[-4:]).lower() if words else "what you said"


def _replies(bank: tuple, principle: str, verb: str, fill: dict, rng: random.Random) -> list[dict]:
    order = rng.sample(range(len(bank)), len(bank))
    return [{"text": bank[i][0].format(**fill), "principle": f"{verb} {principle}: {bank[i][1]}"} for i in order]


def _version(lang: str, index: int, turns: int, principle: str, given: list | None, rng: random.Random) -> dict:
    zh = lang == "zh"
    first, topic, second, revealed = (DIALOGUES_ZH if zh else DIALOGUES_EN)[index]
    if given:
        first = given[0].get(lang) or first
        topic = _topic(first, zh)
        if len(given) > 1:
            second = given[1].get(lang) or second
            revealed = _topic(second, zh)
    follows, violates = ("遵循", "违背") if zh else ("Follows", "Violates")
    fill = {"topic": topic, "revealed": revealed}
    result = [
        {
            "user": first,
            "preferred": _replies(PREFERRED_ZH if zh else PREFERRED_EN, principle, follows, fill, rng),
            "distractors": _replies(DISTRACTORS_ZH if zh else DISTRACTORS_EN, principle, violates, fill, rng),
        }
    ]
    if turns == 2:
        result.append(
            {
                "user": second,
                "preferred": _replies(
                    REFRAMED_PREFERRED_ZH if zh else REFRAMED_PREFERRED_EN, principle, follows, fill, rng
                ),
                "distractors": _replies(
                    REFRAMED_DISTRACTORS_ZH if zh else REFRAMED_DISTRACTORS_EN, principle, violates, fill, rng
                ),
            }
        )
    return {"context": "", "turns": result}


def reply_set_reply(prompt: str, rng: random.Random, chinese: bool) -> str:
    """Return ``{"reply_sets": [...]}`` in the form the prompt asks for (bilingual when it names both languages)."""
    count = int(m.group(1)) if (m := COUNT_RE.search(prompt)) else 1
    turns = int(m.group(1)) if (m := TURNS_RE.search(prompt)) else 1
    principle = m.group(1) if (m := PRINCIPLE_RE.search(prompt)) else "the principle"
    given = None
    if m := GIVEN_RE.search(prompt):
        try:
            given = json.loads(m.group(1))
        except ValueError:
            given = None
    bilingual = '"en"' in prompt and '"zh"' in prompt
    languages = ("en", "zh") if bilingual else ("zh" if "Simplified Chinese." in prompt else "en",)
    sets = []
    for _ in range(max(1, min(count, 10))):
        index = rng.randrange(len(DIALOGUES_EN))
        versions = {lang: _version(lang, index, min(max(turns, 1), 2), principle, given, rng) for lang in languages}
        sets.append(versions if bilingual else versions[languages[0]])
    return json.dumps({"reply_sets": sets}, ensure_ascii=False, indent=2)
