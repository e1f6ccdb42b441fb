vim9script
# Headless scenario tests for parlance.vim against the real daemon and model.
#   PARLANCE_BIN=... PARLANCE_TEST_OUT=result.txt vim -N -u NONE -i NONE -es -S test/run.vim
# Writes one line per test and a closing "N passed, N failed" line to $PARLANCE_TEST_OUT.

const here = expand('<sfile>:p:h')
execute 'set runtimepath^=' .. fnameescape(fnamemodify(here, ':h'))
runtime plugin/parlance.vim
set nomore hidden

g:parlance_binary = $PARLANCE_BIN
g:parlance_count = 1
const TIMEOUT = str2nr($PARLANCE_TEST_TIMEOUT ?? '240') * 1000
const ORIGINAL = ['Project notes',
  'hey team, the launch slipped to march because the vendor is late again. sorry, we will fix the plan.',
  '', 'Thanks']

var out: list<string> = []
var passed = 0
var failed = 0
var skipped = 0

def Log(line: string)
  add(out, line)
  writefile(out, $PARLANCE_TEST_OUT)
enddef

def WaitFor(Cond: func(): any, ms: number): bool
  var start = reltime()
  while !Cond()
    if reltimefloat(reltime(start)) * 1000 > ms
      return false
    endif
    sleep 20m
  endwhile
  return true
enddef

def FreshBuffer()
  silent! only!
  enew!
  setline(1, ORIGINAL)
  &undolevels = &undolevels   # the set-up text is its own undo step
enddef

def Test_rewrite_pick_undo()
  FreshBuffer()
  var src = bufnr()
  # select line 2 linewise, as a person would, then run the command on the selection
  execute "normal! 2GV\<Esc>"
  :'<,'>ParlanceRewrite formal
  var s = parlance#Session('variants')
  assert_equal('variants', get(b:, 'parlance_kind', ''), 'the variants window opens at once')
  assert_true(WaitFor(() => s.deltas > 0 || s.done, TIMEOUT), 'variants start streaming')
  var streamed_while_running = !s.done && len(getbufline(s.scratch, 1, '$')) > 2
  assert_true(WaitFor(() => s.done, TIMEOUT), 'the rewrite finishes')
  assert_equal('', s.error)
  assert_true(s.deltas > 0, 'text streamed as $/progress deltas')
  assert_true(streamed_while_running, 'the scratch buffer filled while streaming')
  assert_true(len(s.variants) >= 1, 'at least one variant')
  if !empty(s.error) || empty(s.variants)
    return
  endif
  var want = s.variants[0].text
  assert_match('\S', want)
  var listing = join(getbufline(s.scratch, 1, '$'), "\n")
  assert_match('\V' .. escape(split(want, "\n")[0], '\'), listing, 'the listing shows the variant')
  # pick variant 1 with the key a person presses in the variants window
  assert_equal(s.scratch, bufnr())
  normal 1
  assert_equal(src, bufnr(), 'back in the source buffer')
  assert_false(bufexists(s.scratch), 'the variants window is closed')
  var expected = [ORIGINAL[0]] + split(substitute(want, '\n\+$', '', ''), "\n", true) + ORIGINAL[2 :]
  assert_equal(expected, getline(1, '$'), 'the selection became the variant')
  undo
  assert_equal(ORIGINAL, getline(1, '$'), 'one undo restores the original')
enddef

def Test_rewrite_characterwise()
  FreshBuffer()
  var src = bufnr()
  # select "the launch slipped ... late again." inside line 2
  var line = getline(2)
  var from = stridx(line, 'the launch')
  var to = stridx(line, 'again.') + strlen('again.') - 1
  execute printf("normal! 2G0%dlv%dl\<Esc>", from, to - from)
  :'<,'>ParlanceRewrite direct
  var s = parlance#Session('variants')
  assert_true(WaitFor(() => s.done, TIMEOUT), 'the rewrite finishes')
  assert_equal('', s.error)
  if empty(s.variants)
    assert_report('no variants')
    return
  endif
  parlance#Pick(1)
  assert_equal(src, bufnr())
  var text = join(getline(1, '$'), "\n")
  var want = join([ORIGINAL[0], strpart(line, 0, from) .. s.variants[0].text .. strpart(line, to + 1)] + ORIGINAL[2 :], "\n")
  assert_equal(want, text, 'only the selected characters were replaced')
  undo
  assert_equal(ORIGINAL, getline(1, '$'))
enddef

def Test_rewrite_cancel_on_dismiss()
  FreshBuffer()
  g:parlance_count = 3
  :2ParlanceRewrite
  g:parlance_count = 1
  var s = parlance#Session('variants')
  assert_true(WaitFor(() => s.deltas > 0 || s.done, TIMEOUT), 'streaming starts')
  assert_false(s.done, 'still running when dismissed')
  # q in the variants window dismisses it and cancels the request
  normal q
  assert_false(bufexists(s.scratch), 'the window is gone')
  assert_true(WaitFor(() => s.done, 30000), 'the request ends')
  assert_true(s.cancelled, 'the daemon answered -32800 (cancelled)')
  assert_equal('', s.error)
  assert_equal(ORIGINAL, getline(1, '$'), 'the buffer is untouched')
enddef

def Test_daemon_error_is_reported()
  FreshBuffer()
  :2ParlanceRewrite no-such-tone
  var s = parlance#Session('variants')
  assert_true(WaitFor(() => s.done, 30000), 'the request ends')
  assert_match('\S', s.error, 'the daemon error message is kept')
  assert_equal(s.error, parlance#Status().last_error, 'and shown with echohl ErrorMsg')
  assert_false(s.cancelled)
  silent! ParlanceCancel
  if bufexists(s.scratch)
    execute 'bwipeout ' .. s.scratch
  endif
enddef

def Test_restart_after_crash()
  var before = parlance#Status()
  assert_true(before.running, 'the daemon is running')
  job_stop(parlance#Job(), 'kill')
  assert_true(WaitFor(() => parlance#Status().ready && parlance#Status().pid != before.pid, 30000), 'a new daemon is up')
  assert_match('exited.*restarting', parlance#Status().last_error, 'the user is told')
enddef

def Test_summarize()
  FreshBuffer()
  :%ParlanceSummarize
  var s = parlance#Session('summary')
  assert_true(WaitFor(() => s.done, TIMEOUT), 'the summary finishes')
  assert_equal('', s.error)
  assert_match('\S', get(s.result, 'summary', ''))
  assert_true(s.deltas > 0, 'the summary streamed')
  var shown = join(getbufline(s.scratch, 1, '$'), "\n")
  assert_match('\V' .. escape(split(s.result.summary, "\n")[0], '\'), shown)
  normal q
enddef

def Test_ask()
  if index(get(parlance#Status().capabilities, 'methods', []), 'ask/stream') < 0
    throw 'skip: the daemon has no ask/stream yet'
  endif
  FreshBuffer()
  ParlanceAsk When is the launch now?
  var s = parlance#Session('answer')
  assert_true(WaitFor(() => s.done, TIMEOUT), 'the answer finishes')
  assert_equal('', s.error)
  assert_match('\S', s.answer)
  var shown = join(getbufline(s.scratch, 1, '$'), "\n")
  assert_match('Q: When is the launch now?', shown)
  normal q
enddef

const tests = ['Test_rewrite_pick_undo', 'Test_rewrite_characterwise', 'Test_rewrite_cancel_on_dismiss',
  'Test_daemon_error_is_reported', 'Test_restart_after_crash', 'Test_summarize', 'Test_ask']
for name in tests
  v:errors = []
  var start = reltime()
  var skip = ''
  try
    call(name, [])
  catch /^skip: /
    skip = substitute(v:exception, '^skip: ', '', '')
  catch
    add(v:errors, 'exception: ' .. v:exception .. ' @ ' .. v:throwpoint)
  endtry
  var took = printf('%.1fs', reltimefloat(reltime(start)))
  if !empty(skip)
    skipped += 1
    Log('skip ' .. name .. ' (' .. skip .. ')')
  elseif empty(v:errors)
    passed += 1
    Log('ok   ' .. name .. ' (' .. took .. ')')
  else
    failed += 1
    Log('FAIL ' .. name .. ' (' .. took .. ')')
    for e in v:errors
      Log('     ' .. e)
    endfor
  endif
endfor
Log(printf('%d passed, %d failed, %d skipped', passed, failed, skipped))
parlance#Stop()
sleep 300m
if failed > 0
  cquit!
endif
qall!
