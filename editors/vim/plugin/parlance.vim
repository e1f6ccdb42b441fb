vim9script
# parlance.vim — rewrite, summarize and ask with the local Parlance daemon.
# The work lives in autoload/parlance.vim; this file only defines the commands.
# Maintainer: the Parlance authors.  License: same as Parlance.

if exists('g:loaded_parlance') || !has('channel') || !has('job')
  finish
endif
g:loaded_parlance = 1

# :[range]ParlanceRewrite [tone]   rewrite the lines (or the characterwise visual selection)
command! -range -nargs=? -complete=customlist,parlance#CompleteTone ParlanceRewrite parlance#Rewrite(<line1>, <line2>, <q-args>)
# :[range]ParlanceSummarize        summarize the range (default: the whole buffer)
command! -range=% ParlanceSummarize parlance#Summarize(<line1>, <line2>)
# :ParlanceAsk {question}          ask a question about the buffer
command! -nargs=+ ParlanceAsk parlance#Ask(<q-args>)
command! ParlanceCancel parlance#CancelAll()
command! ParlanceRestart parlance#Restart()
command! ParlanceStatus parlance#EchoStatus()

xnoremap <silent> <Plug>(ParlanceRewrite) :ParlanceRewrite<CR>
nnoremap <silent> <Plug>(ParlanceSummarize) <Cmd>ParlanceSummarize<CR>

augroup parlance_plugin
  autocmd!
  autocmd VimLeavePre * if exists('*parlance#Stop') | parlance#Stop() | endif
augroup END
