import re, textwrap
lines = [l.rstrip('\n').split('|', 1) for l in open('/tmp/gen/dialogue.txt') if l.strip()]
LIMIT = 118
def halves(t):
    if len(t) <= LIMIT: return [t]
    cands = [m.end() for m in re.finditer(r'[.?!]\s', t)] or [m.end() for m in re.finditer(r',\s', t)]
    cands = [c for c in cands if min(c, len(t) - c) >= 25]
    if cands:
        c = min(cands, key=lambda i: abs(i - len(t) / 2))
        return halves(t[:c].strip()) + halves(t[c:].strip())
    w = t.split(); h = len(w) // 2
    return halves(' '.join(w[:h])) + halves(' '.join(w[h:]))
cues, prev = [], None
for sp, text in lines:
    for i, piece in enumerate(halves(text)):
        cues.append((sp, piece, sp != prev and i == 0)); prev = sp
total_chars = sum(len(c[1]) for c in cues)
start, end_target = 1.2, 449.0
gaps = sum(0.7 if c[2] else 0.2 for c in cues[1:])
per_char = (end_target - start - gaps) / total_chars
def ts(x):
    ms = int(round(x * 1000)); h, ms = divmod(ms, 3600000); m, ms = divmod(ms, 60000); s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{ms:03d}"
out = []; t = start
for n, (sp, text, first) in enumerate(cues, 1):
    if n > 1: t += 0.7 if first else 0.2
    d = len(text) * per_char
    body = (sp + ': ' + text) if first else text
    wrapped = [body] if len(body) <= 46 else textwrap.wrap(body, (len(body) + 1) // 2 + 8, break_on_hyphens=False)
    if len(wrapped) > 2: wrapped = textwrap.wrap(body, (len(body) + 1) // 2 + 14, break_on_hyphens=False)
    assert len(wrapped) <= 2, body
    out.append(f"{n}\n{ts(t)} --> {ts(t + d)}\n" + "\n".join(wrapped) + "\n")
    t += d
open('/work/main/Samples/podcast-sample.srt', 'w').write("\n".join(out))
print(len(cues), ts(t), max(len(c[1]) for c in cues))
