vim9script
# autoload/parlance.vim — the Parlance client for Vim 9.
#
# One daemon (`parlance --stdio`) runs as a job whose channel is in "lsp" mode, so Vim
# does the Content-Length framing and JSON.  Every request is asynchronous: results and
# the `$/progress` notifications that stream the model's text arrive in callbacks, and
# the editor is never blocked while the model writes.

const DEFAULT_TONES = ['formal', 'casual', 'empathetic', 'direct', 'diplomatic']
const CANCELLED = -32800
const VERSION = '0.1.0'

var job: any = 0             # the daemon job (0 when there is none)
var gen = 0                   # bumped on every start, so callbacks of an old job are ignored
var ready = false             # the initialize result has arrived
var stopping = false          # we asked the daemon to exit: its exit is no crash
var queue: list<dict<any>> = []        # requests made before initialize answered
var pending: dict<dict<any>> = {}      # request id -> request
var progress: dict<any> = {}           # workDoneToken -> funcref(value)
var token_seq = 0
var restarts: list<number> = []        # localtime() of automatic restarts
var stderr_tail: list<string> = []
var docs: dict<number> = {}            # document uri -> changedtick sent to the daemon
var capabilities: dict<any> = {}
var sessions: dict<dict<any>> = {}     # 'variants' | 'summary' | 'answer' -> session
var last_error = ''

# ---------------------------------------------------------------- configuration

def Opt(name: string, default: any): any
  return get(g:, 'parlance_' .. name, default)
enddef

def Binary(): string
  var bin = Opt('binary', '')
  if empty(bin)
    bin = empty($PARLANCE_BIN) ? 'parlance' : $PARLANCE_BIN
  endif
  return expand(bin)
enddef

# ---------------------------------------------------------------- messages

def Error(msg: string)
  last_error = msg
  echohl ErrorMsg
  echomsg 'parlance: ' .. msg
  echohl None
enddef

def Info(msg: string)
  echomsg 'parlance: ' .. msg
enddef

# ---------------------------------------------------------------- the daemon

def Running(): bool
  return type(job) == v:t_job && job_status(job) == 'run'
enddef

def Start(): bool
  if Running()
    return true
  endif
  var bin = Binary()
  if !executable(bin)
    Error('daemon not found: ' .. bin .. ' (set g:parlance_binary)')
    return false
  endif
  var cmd = [bin, '--stdio']
  var model = Opt('model', '')
  if !empty(model)
    cmd += ['--model', expand(model)]
  endif
  cmd += Opt('args', [])
  gen += 1
  var mygen = gen
  ready = false
  stopping = false
  stderr_tail = []
  docs = {}
  capabilities = {}
  job = job_start(cmd, {
    in_mode: 'lsp', out_mode: 'lsp', err_mode: 'nl', noblock: true, stoponexit: 'term',
    out_cb: (ch, msg) => OnMessage(mygen, msg),
    err_cb: (ch, line) => OnStderr(line),
    exit_cb: (j, status) => OnExit(mygen, status),
  })
  if job_status(job) != 'run'
    job = 0
    Error('could not start ' .. bin)
    return false
  endif
  var init = {
    processId: getpid(),
    clientInfo: {name: 'parlance.vim', version: VERSION},
    capabilities: {window: {workDoneProgress: true}},
  }
  ch_sendexpr(job, {method: 'initialize', params: init}, {callback: (ch, resp) => OnInitialized(mygen, resp)})
  return true
enddef

def OnInitialized(mygen: number, resp: dict<any>)
  if mygen != gen
    return
  endif
  if has_key(resp, 'error') || type(get(resp, 'result', 0)) != v:t_dict
    Error('initialize failed: ' .. ErrorText(get(resp, 'error', {message: 'no result'})))
    Stop()
    return
  endif
  capabilities = get(resp.result, 'capabilities', {})
  ch_sendexpr(job, {method: 'initialized', params: {}})
  ready = true
  var waiting = queue
  queue = []
  for req in waiting
    Send(req)
  endfor
enddef

def OnMessage(mygen: number, msg: any)
  if mygen != gen || type(msg) != v:t_dict
    return
  endif
  var method = get(msg, 'method', '')
  if method == '$/progress'
    var params = get(msg, 'params', {})
    var token = get(params, 'token', '')
    var Handler = get(progress, type(token) == v:t_string ? token : string(token), 0)
    if type(Handler) == v:t_func
      Handler(get(params, 'value', {}))
    endif
  elseif method != '' && has_key(msg, 'id')
    # A request from the server: this client implements none.
    ch_sendexpr(job, {id: msg.id, error: {code: -32601, message: 'not supported by parlance.vim'}})
  endif
enddef

def OnStderr(line: string)
  add(stderr_tail, line)
  if len(stderr_tail) > 20
    remove(stderr_tail, 0)
  endif
enddef

def OnExit(mygen: number, status: number)
  if mygen != gen
    return
  endif
  job = 0
  ready = false
  var failed = values(pending) + queue
  pending = {}
  queue = []
  var why = 'the daemon exited (status ' .. status .. ')'
  for req in failed
    Finish(req, {error: {code: -32099, message: why}})
  endfor
  if stopping
    return
  endif
  var now = localtime()
  filter(restarts, (_, t) => now - t < 60)
  var tail = empty(stderr_tail) ? '' : ': ' .. stderr_tail[-1]
  if len(restarts) >= 3
    Error(why .. tail .. '; not restarting again (three restarts in a minute) — :ParlanceRestart to retry')
    return
  endif
  add(restarts, now)
  Error(why .. tail .. '; restarting it')
  Start()
enddef

# Stop the daemon politely (shutdown, then exit); it is killed if it lingers.
export def Stop()
  if !Running()
    return
  endif
  stopping = true
  var j = job
  if ready
    ch_evalexpr(j, {method: 'shutdown', params: {}}, {timeout: 1000})
    ch_sendexpr(j, {method: 'exit', params: {}})
  endif
  timer_start(1500, (_) => job_status(j) == 'run' ? job_stop(j, 'kill') : 0)
enddef

export def Restart()
  Stop()
  job = 0
  gen += 1
  restarts = []
  if Start()
    Info('daemon restarted')
  endif
enddef

export def Status(): dict<any>
  return {
    running: Running(), ready: ready, pid: Running() ? job_info(job).process : 0,
    binary: Binary(), capabilities: capabilities, pending: len(pending),
    restarts: len(restarts), last_error: last_error,
  }
enddef

export def EchoStatus()
  var s = Status()
  echo printf('parlance: %s, pid %d, %d pending, binary %s', s.running ? (s.ready ? 'ready' : 'starting') : 'stopped',
    s.pid, s.pending, s.binary)
enddef

export def Job(): any
  return job
enddef

# ---------------------------------------------------------------- requests

# Send `method` with `params`; OnResult(result) or OnError(error) is called later.
# Returns the request, which Cancel() takes.
def Request(method: string, params: dict<any>, OnResult: func, OnError: func): dict<any>
  var req = {method: method, params: params, id: 0, gen: 0, done: false, cancelled: false,
    OnResult: OnResult, OnError: OnError}
  if !Start()
    req.done = true
    return req
  endif
  if ready
    Send(req)
  else
    add(queue, req)
  endif
  return req
enddef

def Send(req: dict<any>)
  if req.cancelled
    Finish(req, {error: {code: CANCELLED, message: 'cancelled'}})
    return
  endif
  var sent = ch_sendexpr(job, {method: req.method, params: req.params},
    {callback: (ch, resp) => Finish(req, resp)})
  if type(sent) != v:t_dict || !has_key(sent, 'id')
    Finish(req, {error: {code: -32099, message: 'could not write to the daemon'}})
    return
  endif
  req.id = sent.id
  req.gen = gen
  pending[string(sent.id)] = req
enddef

def Finish(req: dict<any>, resp: dict<any>)
  if req.done
    return
  endif
  req.done = true
  if req.id != 0 && has_key(pending, string(req.id))
    remove(pending, string(req.id))
  endif
  if has_key(resp, 'error')
    call(req.OnError, [type(resp.error) == v:t_dict ? resp.error : {message: string(resp.error)}])
  else
    call(req.OnResult, [get(resp, 'result', {})])
  endif
enddef

# Ask the daemon to stop `req`; it answers with error -32800 and the callbacks run then.
def Cancel(req: dict<any>)
  if empty(req) || req.done || req.cancelled
    return
  endif
  req.cancelled = true
  if req.id != 0 && req.gen == gen && Running()
    ch_sendexpr(job, {method: '$/cancelRequest', params: {id: req.id}})
  endif
enddef

def NewToken(Handler: func): string
  token_seq += 1
  var token = 'parlance.vim-' .. getpid() .. '-' .. token_seq
  progress[token] = Handler
  return token
enddef

def DropToken(token: string)
  if has_key(progress, token)
    remove(progress, token)
  endif
enddef

def ErrorText(err: any): string
  if type(err) != v:t_dict
    return string(err)
  endif
  var msg = get(err, 'message', 'unknown error')
  return type(msg) == v:t_string ? msg : string(msg)
enddef

def IsCancel(err: dict<any>): bool
  return get(err, 'code', 0) == CANCELLED
enddef

# ---------------------------------------------------------------- scratch windows

def ScratchName(kind: string): string
  return 'parlance://' .. kind
enddef

# Open (or reuse) the scratch buffer for `kind` in a window at the bottom and go there.
def OpenScratch(kind: string): number
  var name = ScratchName(kind)
  var buf = bufnr('^' .. name .. '$')
  var win = buf > 0 ? bufwinid(buf) : -1
  if win != -1
    win_gotoid(win)
  else
    botright new
    execute 'resize ' .. Opt('window_height', 12)
    if buf > 0
      execute 'silent buffer ' .. buf
    else
      execute 'silent file ' .. fnameescape(name)
      buf = bufnr()
    endif
  endif
  setlocal buftype=nofile bufhidden=wipe noswapfile nobuflisted nonumber norelativenumber
  setlocal wrap linebreak breakindent nospell foldcolumn=0 signcolumn=no
  &l:filetype = 'parlance'
  b:parlance_kind = kind
  nnoremap <buffer> <silent> <nowait> q <Cmd>call parlance#Dismiss()<CR>
  nnoremap <buffer> <silent> <nowait> <C-c> <Cmd>call parlance#Dismiss()<CR>
  if kind == 'variants'
    nnoremap <buffer> <silent> <CR> <Cmd>call parlance#Pick(0)<CR>
    for n in range(1, 9)
      execute printf('nnoremap <buffer> <silent> <nowait> %d <Cmd>call parlance#Pick(%d)<CR>', n, n)
    endfor
  endif
  augroup parlance_scratch
    autocmd! * <buffer>
    autocmd BufWipeout <buffer> parlance#OnWipe(expand('<abuf>')->str2nr())
  augroup END
  setlocal nomodifiable
  return bufnr()
enddef

def SetLines(buf: number, lines: list<string>)
  if !bufexists(buf)
    return
  endif
  setbufvar(buf, '&modifiable', 1)
  setbufline(buf, 1, lines)
  deletebufline(buf, len(lines) + 1, '$')
  setbufvar(buf, '&modifiable', 0)
enddef

def TextLines(text: string, indent: string): list<string>
  return split(substitute(text, '\r', '', 'g'), "\n", true)->map((_, l) => indent .. l)
enddef

# The scratch buffer was wiped (q, :close, :bwipe): stop what it was showing.
export def OnWipe(buf: number)
  for [kind, s] in items(sessions)
    if get(s, 'scratch', -1) == buf
      s.dismissed = true
      if has_key(s, 'req')
        Cancel(s.req)
      endif
    endif
  endfor
enddef

# q in a scratch window: cancel its request (if still running) and close it.
export def Dismiss()
  var kind = get(b:, 'parlance_kind', '')
  var s = get(sessions, kind, {})
  if !empty(s) && has_key(s, 'req')
    Cancel(s.req)
  endif
  execute 'silent! bwipeout ' .. bufnr()
enddef

export def CancelAll()
  var n = 0
  for s in values(sessions)
    if has_key(s, 'req') && !s.req.done
      Cancel(s.req)
      n += 1
    endif
  endfor
  Info(n == 0 ? 'nothing to cancel' : 'cancelling')
enddef

export def Session(kind: string): dict<any>
  return get(sessions, kind, {})
enddef

def NewSession(kind: string): dict<any>
  var old = get(sessions, kind, {})
  if !empty(old)
    old.dismissed = true    # its window now belongs to the new session
    if has_key(old, 'req')
      Cancel(old.req)
    endif
  endif
  var s: dict<any> = {kind: kind, done: false, cancelled: false, error: '', deltas: 0, phase: '', dismissed: false}
  sessions[kind] = s
  return s
enddef

def PartialField(value: dict<any>, field: string): string
  # Structured generation streams JSON; the daemon also sends the object parsed so far.
  var partial = get(value, 'partial', null)
  if type(partial) == v:t_dict && type(get(partial, field, null)) == v:t_string
    return partial[field]
  endif
  return ''
enddef

# ---------------------------------------------------------------- rewrite

export def CompleteTone(lead: string, line: string, pos: number): list<string>
  var tones = get(capabilities, 'tones', DEFAULT_TONES)
  return copy(tones)->filter((_, t) => stridx(t, lead) == 0)
enddef

# Rewrite lines line1..line2 — or, when the last visual selection was characterwise and
# covers exactly those lines, just the selected characters — into tone variants.
export def Rewrite(line1: number, line2: number, tone_arg: string = '')
  var buf = bufnr()
  var lines = getline(line1, line2)
  var charwise = visualmode() == 'v' && line("'<") == line1 && line("'>") == line2
  var scol = 1
  var ecol = 0
  var text: string
  if charwise
    scol = col("'<")
    ecol = col("'>")
    var last = lines[-1]
    if ecol > strlen(last)
      ecol = strlen(last)
    else
      # '> is the first byte of the last character: include all of its bytes
      ecol += strlen(strpart(last, ecol - 1)->strcharpart(0, 1)) - 1
    endif
    var sel = copy(lines)
    sel[-1] = strpart(sel[-1], 0, ecol)
    sel[0] = strpart(sel[0], scol - 1)
    text = join(sel, "\n")
  else
    text = join(lines, "\n")
  endif
  if text =~ '^\_s*$'
    Error('nothing to rewrite: the selection is empty')
    return
  endif
  var tone = empty(tone_arg) ? Opt('default_tone', '') : tone_arg
  var s = NewSession('variants')
  extend(s, {buf: buf, win: win_getid(), line1: line1, line2: line2, charwise: charwise, scol: scol, ecol: ecol,
    original: lines, order: [], texts: {}, finished: {}, variants: [], linemap: []})
  var params: dict<any> = {text: text}
  if !empty(tone)
    params.tones = split(tone, '[, ]\+')
  endif
  var audience = Opt('audience', '')
  if !empty(audience)
    params.audience = audience
  endif
  var count = Opt('count', 0)
  if count > 0
    params.count = count
  endif
  var instructions = Opt('instructions', '')
  if !empty(instructions)
    params.instructions = instructions
  endif
  s.token = NewToken((v) => RewriteProgress(s, v))
  params.workDoneToken = s.token
  s.scratch = OpenScratch('variants')
  RenderVariants(s)
  s.req = Request('compose/variations', params, (r) => RewriteDone(s, r), (e) => RewriteFailed(s, e))
enddef

def RewriteProgress(s: dict<any>, value: dict<any>)
  if s.done
    return
  endif
  s.phase = get(value, 'phase', s.phase) ?? ''
  var part = get(value, 'part', null)
  var key = type(part) == v:t_string ? part : (type(part) == v:t_number ? string(part) : '')
  if key == 'analysis' || key == 'prefix'
    RenderVariants(s)
    return
  endif
  var delta = get(value, 'delta', null)
  var partial = get(value, 'partial', null)
  if s.phase == 'done' && type(partial) == v:t_dict && type(get(partial, 'text', null)) == v:t_string
    # a finished variation: its final text, tone and scores
    if index(s.order, key) < 0
      add(s.order, key)
    endif
    s.texts[key] = partial.text
    s.finished[key] = partial
  elseif type(delta) == v:t_string && !empty(delta)
    if index(s.order, key) < 0
      add(s.order, key)
      s.texts[key] = ''
    endif
    s.texts[key] ..= delta
    s.deltas += 1
  endif
  RenderVariants(s)
enddef

def RewriteDone(s: dict<any>, result: any)
  s.done = true
  DropToken(s.token)
  var variants = type(result) == v:t_dict ? get(result, 'variations', []) : []
  s.variants = type(variants) == v:t_list ? variants : []
  s.analysis = type(result) == v:t_dict ? get(result, 'analysis', {}) : {}
  RenderVariants(s)
  if empty(s.variants)
    Error('the daemon returned no variants')
  elseif !s.dismissed
    Info(printf('%d variant%s: 1-%d or <CR> replaces the selection, q closes', len(s.variants),
      len(s.variants) == 1 ? '' : 's', len(s.variants)))
  endif
enddef

def RewriteFailed(s: dict<any>, err: dict<any>)
  s.done = true
  DropToken(s.token)
  if IsCancel(err)
    s.cancelled = true
    if !s.dismissed
      Info('rewrite cancelled')
    endif
  else
    s.error = ErrorText(err)
    Error(s.error)
  endif
  RenderVariants(s)
enddef

def VariantTitle(v: dict<any>): string
  var bits = []
  for key in ['tone', 'audience']
    if type(get(v, key, null)) == v:t_string && !empty(v[key])
      add(bits, v[key])
    endif
  endfor
  var f = get(v, 'formalityScore', null)
  if type(f) == v:t_float || type(f) == v:t_number
    add(bits, printf('formality %.2f', 0.0 + f))
  endif
  return join(bits, ', ')
enddef

def RenderVariants(s: dict<any>)
  if s.dismissed || !bufexists(get(s, 'scratch', -1))
    return
  endif
  var head: string
  if !s.done
    head = 'Parlance rewrite — writing' .. (empty(s.phase) ? '' : ' (' .. s.phase .. ')') .. '…   q cancels'
  elseif !empty(s.error)
    head = 'Parlance rewrite failed: ' .. s.error .. '   q closes'
  elseif s.cancelled
    head = 'Parlance rewrite cancelled   q closes'
  else
    head = printf('Parlance rewrite — 1-%d or <CR> on a variant replaces the selection (u undoes), q closes', len(s.variants))
  endif
  var lines = [head, '']
  var linemap = [-1, -1]
  var entries: list<list<any>> = []
  if s.done && !empty(s.variants)
    for v in s.variants
      add(entries, [VariantTitle(v), type(get(v, 'text', null)) == v:t_string ? v.text : ''])
    endfor
  else
    for key in s.order
      add(entries, [has_key(s.finished, key) ? VariantTitle(s.finished[key]) .. ' (done)' : 'writing…', s.texts[key]])
    endfor
  endif
  var i = 0
  for [title, text] in entries
    add(lines, printf('[%d] %s', i + 1, title))
    add(linemap, i)
    for l in TextLines(text, '    ')
      add(lines, l)
      add(linemap, i)
    endfor
    add(lines, '')
    add(linemap, i)
    i += 1
  endfor
  s.linemap = linemap
  SetLines(s.scratch, lines)
enddef

# Replace the selection with variant n (1-based; 0 = the variant under the cursor).
export def Pick(n: number = 0)
  var s = get(sessions, 'variants', {})
  if empty(s) || !s.done || empty(s.variants)
    Error(empty(s) || s.done ? 'no variants to pick from' : 'still writing — wait for the variants to finish')
    return
  endif
  var idx = n - 1
  if n == 0
    idx = bufnr() == s.scratch ? get(s.linemap, line('.') - 1, -1) : -1
  endif
  if idx < 0 || idx >= len(s.variants)
    Error(n == 0 ? 'put the cursor on a variant' : 'no variant ' .. n)
    return
  endif
  var text = get(s.variants[idx], 'text', '')
  if type(text) != v:t_string
    Error('variant ' .. (idx + 1) .. ' has no text')
    return
  endif
  if !bufexists(s.buf) || getbufline(s.buf, s.line1, s.line2) != s.original
    Error('the selected text changed since the rewrite started; not replacing it')
    return
  endif
  if bufexists(s.scratch)
    execute 'silent! bwipeout ' .. s.scratch
  endif
  if winbufnr(s.win) == s.buf
    win_gotoid(s.win)
  elseif bufwinid(s.buf) != -1
    win_gotoid(bufwinid(s.buf))
  else
    execute 'buffer ' .. s.buf
  endif
  if !&modifiable
    Error('the buffer is not modifiable')
    return
  endif
  Replace(s, text)
  remove(sessions, 'variants')
  Info('replaced with variant ' .. (idx + 1) .. ' (u undoes)')
enddef

# One change, one undo step: close the previous undo block, then edit the lines in place.
def Replace(s: dict<any>, variant: string)
  var text = substitute(variant, '\r', '', 'g')
  var new: list<string>
  if s.charwise
    var prefix = strpart(s.original[0], 0, s.scol - 1)
    var suffix = strpart(s.original[-1], s.ecol)
    new = split(prefix .. text .. suffix, "\n", true)
  else
    new = split(substitute(text, '\n\+$', '', ''), "\n", true)
  endif
  &undolevels = &undolevels
  var old = s.line2 - s.line1 + 1
  if len(new) >= old
    setline(s.line1, new[: old - 1])
    if len(new) > old
      append(s.line2, new[old :])
    endif
  else
    setline(s.line1, new)
    deletebufline(s.buf, s.line1 + len(new), s.line2)
  endif
  cursor(s.line1, s.charwise ? s.scol : 1)
enddef

# ---------------------------------------------------------------- summarize

export def Summarize(line1: number, line2: number)
  var text = join(getline(line1, line2), "\n")
  if text =~ '^\_s*$'
    Error('nothing to summarize: the buffer is empty')
    return
  endif
  var s = NewSession('summary')
  extend(s, {partial: {}, result: {}, message: ''})
  s.token = NewToken((v) => SummaryProgress(s, v))
  s.scratch = OpenScratch('summary')
  RenderSummary(s)
  s.req = Request('analysis/summarize', {text: text, workDoneToken: s.token},
    (r) => SummaryDone(s, r), (e) => SummaryFailed(s, e))
enddef

def SummaryProgress(s: dict<any>, value: dict<any>)
  if s.done
    return
  endif
  s.phase = get(value, 'phase', s.phase) ?? ''
  var msg = get(value, 'message', null)
  if type(msg) == v:t_string
    s.message = msg
  endif
  if type(get(value, 'partial', null)) == v:t_dict
    s.partial = value.partial
  endif
  if type(get(value, 'delta', null)) == v:t_string
    s.deltas += 1
  endif
  RenderSummary(s)
enddef

def SummaryDone(s: dict<any>, result: any)
  s.done = true
  DropToken(s.token)
  s.result = type(result) == v:t_dict ? result : {}
  RenderSummary(s)
enddef

def SummaryFailed(s: dict<any>, err: dict<any>)
  s.done = true
  DropToken(s.token)
  if IsCancel(err)
    s.cancelled = true
  else
    s.error = ErrorText(err)
    Error(s.error)
  endif
  RenderSummary(s)
enddef

def Bullets(value: any): list<string>
  return type(value) == v:t_list ? mapnew(value, (_, v) => '  - ' .. (type(v) == v:t_string ? v : string(v))) : []
enddef

def RenderSummary(s: dict<any>)
  if s.dismissed || !bufexists(get(s, 'scratch', -1))
    return
  endif
  var r = !empty(s.result) ? s.result : s.partial
  var head = s.done ? (empty(s.error) ? (s.cancelled ? 'Parlance summary — cancelled' : 'Parlance summary') : 'Parlance summary failed: ' .. s.error)
    : 'Parlance summary — writing' .. (empty(s.message) ? '' : ' (' .. s.message .. ')') .. '…   q cancels'
  var lines = [head .. (s.done ? '   q closes' : ''), '']
  if type(get(r, 'summary', null)) == v:t_string
    lines += TextLines(r.summary, '')
    add(lines, '')
  endif
  if !empty(Bullets(get(r, 'mainTopics', null)))
    lines += ['Main topics:'] + Bullets(r.mainTopics) + ['']
  endif
  if !empty(Bullets(get(r, 'keyTakeaways', null)))
    lines += ['Key takeaways:'] + Bullets(r.keyTakeaways) + ['']
  endif
  var meta = []
  if type(get(r, 'targetAudience', null)) == v:t_string
    add(meta, 'Audience: ' .. r.targetAudience)
  endif
  if type(get(r, 'engagementLevel', null)) == v:t_string
    add(meta, 'engagement: ' .. r.engagementLevel)
  endif
  if !empty(meta)
    add(lines, join(meta, ' · '))
  endif
  SetLines(s.scratch, lines)
enddef

# ---------------------------------------------------------------- ask

def BufferUri(buf: number): string
  var name = bufname(buf)
  if !empty(name) && empty(getbufvar(buf, '&buftype'))
    return 'file://' .. fnamemodify(name, ':p')
  endif
  return 'vim://buffer/' .. buf
enddef

export def Ask(question: string)
  if question =~ '^\s*$'
    Error('usage: :ParlanceAsk {question}')
    return
  endif
  var buf = bufnr()
  var text = join(getline(1, '$'), "\n")
  if text =~ '^\_s*$'
    Error('nothing to ask about: the buffer is empty')
    return
  endif
  var s = NewSession('answer')
  extend(s, {question: question, uri: BufferUri(buf), answer: '', result: {}})
  var tick = getbufvar(buf, 'changedtick')
  s.scratch = OpenScratch('answer')
  RenderAnswer(s)
  var Fail = (e) => AskFailed(s, e)
  var AskNow = () => {
    if s.cancelled || s.dismissed
      AskFailed(s, {code: CANCELLED, message: 'cancelled'})
      return
    endif
    s.token = NewToken((v) => AskProgress(s, v))
    s.req = Request('ask/stream', {uri: s.uri, question: question, workDoneToken: s.token},
      (r) => AskDone(s, r), Fail)
  }
  var sent = get(docs, s.uri, -1)
  if sent == tick
    AskNow()
  else
    var method = sent == -1 ? 'document/open' : 'document/change'
    s.req = Request(method, {uri: s.uri, text: text, format: 'text'}, (_) => {
      docs[s.uri] = tick
      AskNow()
    }, Fail)
  endif
enddef

def AskProgress(s: dict<any>, value: dict<any>)
  if s.done
    return
  endif
  s.phase = get(value, 'phase', s.phase) ?? ''
  var delta = get(value, 'delta', null)
  if type(delta) == v:t_string
    s.deltas += 1
    var text = PartialField(value, 'answer')
    s.answer = !empty(text) ? text : (type(get(value, 'partial', null)) == v:t_dict ? s.answer : s.answer .. delta)
  endif
  RenderAnswer(s)
enddef

def AskDone(s: dict<any>, result: any)
  s.done = true
  DropToken(get(s, 'token', ''))
  s.result = type(result) == v:t_dict ? result : {}
  if type(get(s.result, 'answer', null)) == v:t_string
    s.answer = s.result.answer
  endif
  RenderAnswer(s)
enddef

def AskFailed(s: dict<any>, err: dict<any>)
  if s.done
    return
  endif
  s.done = true
  DropToken(get(s, 'token', ''))
  if IsCancel(err)
    s.cancelled = true
  else
    s.error = ErrorText(err)
    Error(s.error)
  endif
  RenderAnswer(s)
enddef

def Clock(seconds: any): string
  var t = float2nr(0.0 + seconds)
  return printf('%02d:%02d', t / 60, t % 60)
enddef

def RenderAnswer(s: dict<any>)
  if s.dismissed || !bufexists(get(s, 'scratch', -1))
    return
  endif
  var head = s.done ? (empty(s.error) ? (s.cancelled ? 'Parlance — cancelled' : 'Parlance answer') : 'Parlance failed: ' .. s.error) .. '   q closes'
    : 'Parlance — answering' .. (empty(s.phase) ? '' : ' (' .. s.phase .. ')') .. '…   q cancels'
  var lines = [head, '', 'Q: ' .. s.question, '']
  lines += TextLines(s.answer, '')
  var r = s.result
  var cites = get(r, 'citations', [])
  if type(cites) == v:t_list && !empty(cites)
    lines += ['', 'Citations:']
    for c in cites
      if type(c) != v:t_dict
        continue
      endif
      var start = get(c, 'start', null)
      var where = type(start) == v:t_number || type(start) == v:t_float
        ? Clock(start) .. '–' .. Clock(get(c, 'end', start) ?? start)
        : 'segment ' .. get(c, 'segmentId', '?')
      var quote = type(get(c, 'text', null)) == v:t_string ? c.text : ''
      add(lines, '  [' .. where .. '] ' .. substitute(quote, '\n', ' ', 'g'))
    endfor
  endif
  var meta = []
  var confidence = get(r, 'confidence', null)
  if type(confidence) == v:t_string
    add(meta, 'confidence: ' .. confidence)
  elseif type(confidence) == v:t_float || type(confidence) == v:t_number
    add(meta, printf('confidence %.2f', 0.0 + confidence))
  endif
  if type(get(r, 'relatedTopics', null)) == v:t_list && !empty(r.relatedTopics)
    add(meta, 'related: ' .. join(mapnew(r.relatedTopics, (_, t) => type(t) == v:t_string ? t : string(t)), ', '))
  endif
  if !empty(meta)
    lines += ['', join(meta, ' · ')]
  endif
  SetLines(s.scratch, lines)
enddef
