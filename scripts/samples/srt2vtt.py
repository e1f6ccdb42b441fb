import re, sys
src = open(sys.argv[1], encoding='utf-8').read().replace('\r\n', '\n')
out = ["WEBVTT - The Local Loop, episode 47: Running language models on your laptop", "",
       "NOTE", "Generated from podcast-sample.srt. Speaker labels become voice tags.", ""]
speaker = None
for block in src.strip().split('\n\n'):
    lines = block.split('\n')
    num, timing, text = lines[0], lines[1], lines[2:]
    m = re.match(r'^([A-Z][A-Z]+): (.*)$', text[0])
    if m:
        speaker = m.group(1).title(); text[0] = m.group(2)
    out += [num, timing.replace(',', '.'), f"<v {speaker}>" + text[0]] + text[1:] + [""]
open(sys.argv[2], 'w', encoding='utf-8').write('\n'.join(out))
