"""The simulator's replies to open prompts: short, coherent replies in three styles, in English and Chinese.

A reply names what the prompt is about (a pet, a loss, a test, work, family...) from a small lexicon, and fills one
of a few templates of its style, picked by the request's seeded generator. The styles keep what the simulated judges
score (``simulation.quality_score``): *template* leans on stock phrases, *list* on generic bullet points, *concise*
engages with the situation and asks about it, so concise > list > template in hidden quality.
"""

import random
import re

# (pattern, topic): the first pattern found in the prompt names its topic; the most specific come first.
TOPICS_EN = (
    (r"\b(cat|dog|pet|puppy|kitten|hamster)s?\b", "your pet"),
    (r"\b(died|dead|death|passed away|funeral|grief|grieving)\b", "this loss"),
    (r"\b(hospital|sick|illness|diagnos\w*|doctor|surgery|health)\b", "your health"),
    (r"\b(exams?|tests?|grades?|interview)\b", "the test"),
    (r"\b(school|class|teacher|homework|university|college|thesis)\b", "school"),
    (r"\b(job|work|boss|manager|colleagues?|office|fired|promotion|coworkers?)\b", "work"),
    (r"\b(partner|boyfriend|girlfriend|husband|wife|breakup|broke up|divorce|dating)\b", "your relationship"),
    (r"\b(mum|mom|dad|father|mother|parents?|sister|brother|family|son|daughter|grand\w+)\b", "your family"),
    (r"\bfriends?\b", "your friend"),
    (r"\b(money|rent|debt|bills|salary)\b", "money"),
    (r"\b(lonely|alone|isolated)\b", "feeling alone"),
)
TOPICS_ZH = (
    (r"猫|狗|宠物", "宠物的事"),
    (r"去世|离世|过世|葬礼|走了", "失去亲人的事"),
    (r"医院|生病|病|身体|诊断|手术", "身体的事"),
    (r"考试|考砸|成绩|分数|驾照|面试", "考试的事"),
    (r"学校|老师|作业|大学|同学|论文", "学校的事"),
    (r"工作|老板|上司|领导|同事|公司|辞退|裁员|加班|升职", "工作上的事"),
    (r"分手|恋爱|男朋友|女朋友|伴侣|对象|老公|老婆|离婚", "感情上的事"),
    (r"父母|妈妈|爸爸|母亲|父亲|家里|家人|姐姐|哥哥|弟弟|妹妹|孩子|奶奶|爷爷|外婆|外公", "家里的事"),
    (r"朋友", "朋友的事"),
    (r"钱|房租|债|工资", "钱的事"),
    (r"孤独|一个人|寂寞", "孤单的感觉"),
)
DEFAULT_TOPIC = {"en": "this", "zh": "这件事"}

STYLES = {
    "en": {
        "template": (
            "I'm really sorry to hear about {topic}. It's completely understandable to feel this way. "
            "It's important to be kind to yourself right now. Remember, you're not alone, and it's okay to feel "
            "overwhelmed. Try to reach out to someone you trust. I hope this helps, and take care of yourself!",
            "I'm sorry to hear about {topic}, that must be so difficult. It's okay to feel upset. Remember, "
            "you're not alone in this. It's important to reach out to friends or family when things feel heavy. "
            "I hope this helps, and please take care of yourself.",
        ),
        "list": (
            "Here are some things that might help right now:\n"
            "- Acknowledge how you feel without judging it.\n"
            "- Talk to someone you trust about {topic}.\n"
            "- Break the problem into small steps.\n"
            "- Keep a regular sleep and meal routine.\n"
            "- Write down what went well each day.\n"
            "- Consider professional support if it persists.",
            "A few ideas that often help at a time like this:\n"
            "- Give yourself time before deciding anything.\n"
            "- Share what happened with one person you trust.\n"
            "- Go for a walk or get some fresh air.\n"
            "- Note one thing you can control today.\n"
            "- Ask for help if it keeps weighing on you.",
        ),
        "concise": (
            "That sounds really hard. When it comes to {topic}, what part weighs on you most right now? If it "
            "helps, we could look at the last time things went a little better and what was different then.",
            "I can hear how much {topic} is on your mind. Would it help to talk through what happened first, or to "
            "think about one small thing you could do next?",
            "It makes sense to feel shaken about {topic}. What would you most want the people around you to "
            "understand about how you feel?",
        ),
    },
    "zh": {
        "template": (
            "听到你遇到{topic}，我真的很难过。有这样的感受是完全可以理解的。现在对自己温柔一点很重要。"
            "记住，你并不孤单，感到不知所措也没关系。试着向你信任的人寻求帮助。希望这对你有帮助，照顾好自己！",
            "听到你为{topic}难过，我很心疼。你的感受完全可以理解。记住，你并不孤单。"
            "多和家人朋友聊聊很重要，需要时记得寻求帮助。希望这对你有帮助，照顾好自己。",
        ),
        "list": (
            "关于{topic}，以下建议或许有帮助：\n"
            "- 接纳自己的感受，不去评判它。\n"
            "- 和信任的人聊聊{topic}。\n"
            "- 把问题拆成小步骤。\n"
            "- 保持规律的作息和饮食。\n"
            "- 每天记下一件顺利的小事。\n"
            "- 如果情况持续，考虑寻求专业支持。",
            "面对{topic}，可以试试这些做法：\n"
            "- 先给自己一点时间，不急着做决定。\n"
            "- 找一个信任的人说说发生了什么。\n"
            "- 出去走走，换换空气。\n"
            "- 写下今天能掌控的一件事。\n"
            "- 如果一直放不下，可以找专业人士聊聊。",
        ),
        "concise": (
            "这确实不容易，尤其是{topic}。现在最让你放不下的是哪一部分？我们可以一起回想上次稍微顺利一点时，有什么不同。",
            "我能感觉到{topic}让你很难受。你想先说说发生了什么，还是想一起想想接下来可以做的一小步？",
            "因为{topic}心里不好受，这很正常。你最希望身边的人理解你的哪一点？",
        ),
    },
}


def topic_of(text: str, chinese: bool) -> str:
    """Return what the prompt is about, as a short phrase for a reply (a default when nothing is recognised)."""
    language = "zh" if chinese else "en"
    lowered = text if chinese else text.lower()
    for pattern, topic in TOPICS_ZH if chinese else TOPICS_EN:
        if re.search(pattern, lowered):
            return topic
    return DEFAULT_TOPIC[language]


def style_reply(style: str, user: str, rng: random.Random, chinese: bool) -> str:
    """Return a reply in ``style`` (template, list or concise; concise for any other) to the user's message."""
    templates = STYLES["zh" if chinese else "en"]
    variants = templates.get(style, templates["concise"])
    return rng.choice(variants).format(topic=topic_of(user, chinese))
