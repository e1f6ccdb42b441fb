;;; test.el --- Parlance as a plain LSP server under Debian's eglot 1.9  -*- lexical-binding: t; -*-

;;; Commentary:

;; emacs -Q --batch <eglot on the load path> -l test.el -f parlance-eglot-test-run
;;
;; No Parlance plugin: eglot is configured the way a user would configure it
;; (`eglot-server-programs', `eglot-confirm-server-initiated-edits'), a text
;; file is opened, eglot connects, and the code-action menu is used as a
;; keyboard user uses it (M-x eglot-code-actions, pick an entry in the
;; `completing-read' prompt).  Every wait is an event loop on
;; `accept-process-output' until the observable event (buffer changed, message
;; shown) happens, with a hang guard of PARLANCE_TEST_TIMEOUT seconds.
;;
;; Environment: PARLANCE_BIN (the daemon), PARLANCE_EGLOT_ARTIFACTS (where
;; the eglot events and stderr logs are written), PARLANCE_EGLOT_DAEMON_LOG
;; (run the daemon with --log-level debug --log-file this), PARLANCE_TEST_TIMEOUT,
;; PARLANCE_EGLOT_DRY_RUN=1 (only check that this file and eglot load).

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'eglot)
(require 'jsonrpc)

(defvar parlance-eglot-test--timeout
  (string-to-number (or (getenv "PARLANCE_TEST_TIMEOUT") "300"))
  "Hang guard for each wait, in seconds.")

(defvar parlance-eglot-test--artifacts
  (file-name-as-directory (or (getenv "PARLANCE_EGLOT_ARTIFACTS") temporary-file-directory))
  "Where the eglot events and stderr logs are written.")

(defconst parlance-eglot-test--text
  (concat "Launch update 🚀\n"
          "\n"
          "Hi all 🙂 quick summary — the launch slipped to March. The vendor is late\n"
          "again and honestly we did not check their timeline early enough, so it is\n"
          "kind of a mess right now. We will sort it out, no big deal. Next week we\n"
          "will send a new plan with dates we actually trust, and we will ask finance\n"
          "for a small extra budget to cover the delay.\n"
          "\n"
          "Thanks,\n"
          "Sam\n")
  "The file: a ~60-word paragraph.
Non-ASCII text (UTF-16 surrogate pairs) precedes the region on its line.")

(defconst parlance-eglot-test--region-start "The vendor is late")
(defconst parlance-eglot-test--region-end "no big deal.")

(defconst parlance-eglot-test--titles
  '("Rewrite: formal" "Rewrite: casual" "Rewrite: diplomatic" "Rewrite: empathetic"
    "Rewrite: direct" "Shorter" "Clearer"))

;;; Recording what the server does, as eglot sees it

(defvar parlance-eglot-test--requests nil
  "Server requests: (METHOD PARAMS RESULT-OR-ERROR), newest first.")
(defvar parlance-eglot-test--notifications nil
  "Server notifications: (METHOD PARAMS), newest first.")
(defvar parlance-eglot-test--messages nil "Messages eglot showed the user, newest first.")

(defun parlance-eglot-test--record-request (orig server method &rest params)
  "Around `eglot-handle-request': record METHOD, PARAMS and the outcome."
  (let ((entry (list method params nil)))
    (push entry parlance-eglot-test--requests)
    (condition-case err
        (let ((result (apply orig server method params)))
          (setf (nth 2 entry) (list :result result))
          result)
      (error (setf (nth 2 entry) (list :error err))
             (signal (car err) (cdr err))))))

(defun parlance-eglot-test--record-notification (_server method &rest params)
  "Before `eglot-handle-notification': record METHOD and PARAMS."
  (push (list method params) parlance-eglot-test--notifications))

(defun parlance-eglot-test--record-message (format &rest args)
  "Before `eglot--message': record what the user sees (FORMAT, ARGS)."
  (push (substring-no-properties (apply #'format format args)) parlance-eglot-test--messages))

(defun parlance-eglot-test--requests-named (method)
  "Recorded server requests with METHOD (a symbol)."
  (cl-remove-if-not (lambda (r) (eq (car r) method)) parlance-eglot-test--requests))

(defun parlance-eglot-test--notifications-named (method)
  "Recorded server notifications with METHOD (a symbol)."
  (cl-remove-if-not (lambda (n) (eq (car n) method)) parlance-eglot-test--notifications))

;;; Checks

(defvar parlance-eglot-test--passed 0)
(defvar parlance-eglot-test--failed nil)

(defun parlance-eglot-test--check (description ok &optional detail)
  "Report DESCRIPTION as passed if OK, else failed with DETAIL."
  (if ok
      (progn (cl-incf parlance-eglot-test--passed)
             (princ (format "  ok    %s\n" description)))
    (push description parlance-eglot-test--failed)
    (princ (format "  FAIL  %s%s\n" description
                   (if detail (format "\n        %s" detail) ""))))
  ok)

(defvar parlance-eglot-test--server nil "The eglot server object, once connected.")

(defun parlance-eglot-test--wait (pred &optional timeout)
  "Process events until PRED is non-nil or TIMEOUT (hang guard) seconds pass.
Stop early if the server process is gone."
  (let ((deadline (+ (float-time) (or timeout parlance-eglot-test--timeout))))
    (while (and (not (funcall pred)) (< (float-time) deadline)
                (or (null parlance-eglot-test--server)
                    (jsonrpc-running-p parlance-eglot-test--server)))
      (accept-process-output nil 0.05))
    (or (funcall pred)
        (progn
          (when (and parlance-eglot-test--server
                     (not (jsonrpc-running-p parlance-eglot-test--server)))
            (princ "        (the server process is gone)\n"))
          nil))))

(defun parlance-eglot-test--idle ()
  "What Emacs does once idle for `eglot-send-changes-idle-time': send didChange.
Idle timers never fire in --batch (Emacs is never idle waiting for keys), so
run eglot's pending didChange idle timer, exactly as an idle Emacs would."
  (let ((timer eglot--change-idle-timer))
    (when (timerp timer)
      (cancel-timer timer)
      (apply (timer--function timer) (timer--args timer)))))

(defun parlance-eglot-test--menu (title &optional kind)
  "Do `M-x eglot-code-actions RET' and choose TITLE in the menu.
With KIND, do `C-u M-x eglot-code-actions RET' and answer KIND when asked
for the action kind.  Return (ITEMS SECONDS ERROR): the menu items eglot
offered (an alist title → action plist), how long the command took, and
the error it signalled."
  (let ((items nil) (err nil) (t0 (float-time))
        ;; M-x ... RET: the last event is a key, so eglot 1.9 asks with
        ;; `completing-read', not `x-popup-menu' (that is for mouse events).
        (last-nonmenu-event 13)
        (this-command 'eglot-code-actions)
        (current-prefix-arg (and kind '(4))))
    (cl-letf (((symbol-function 'completing-read)
               (lambda (prompt collection &rest _)
                 (if (string-match-p "Action kind" prompt)
                     kind
                   (setq items collection)
                   (unless (assoc title collection)
                     (error "No %S in the menu" title))
                   title))))
      (condition-case e (call-interactively #'eglot-code-actions)
        (error (setq err e))))
    (list items (- (float-time) t0) err)))

(defun parlance-eglot-test--select (beg end)
  "Mark BEG..END as the active region, as a user dragging over it would."
  (goto-char beg)
  (push-mark beg t t)
  (goto-char end)
  (activate-mark))

(defun parlance-eglot-test--region-bounds ()
  "Bounds of the region to rewrite in the current buffer."
  (save-excursion
    (goto-char (point-min))
    (let ((beg (progn (search-forward parlance-eglot-test--region-start)
                      (match-beginning 0)))
          (end (progn (search-forward parlance-eglot-test--region-end) (point))))
      (list beg end))))

(defun parlance-eglot-test--check-menu (items where)
  "Check the code-action menu ITEMS offered WHERE."
  (let ((titles (mapcar #'car items)))
    (parlance-eglot-test--check
     (format "%s: the menu offers the 7 rewrite actions" where)
     (null (cl-set-exclusive-or titles parlance-eglot-test--titles :test #'equal))
     (format "offered %S" titles))
    (parlance-eglot-test--check
     (format "%s: each is kind refactor.rewrite with command parlance.rewrite" where)
     (and items
          (cl-every (lambda (item)
                      (let ((a (cdr item)))
                        (and (equal (plist-get a :kind) "refactor.rewrite")
                             (equal (plist-get (plist-get a :command) :command)
                                    "parlance.rewrite"))))
                    items))
     (format "%S" (mapcar #'cdr items)))))

;;; Scenarios

(defun parlance-eglot-test--connect (file)
  "Visit FILE as a configured user does; return its buffer, managed by eglot."
  (let ((buf (find-file-noselect file)))   ; text-mode-hook runs eglot-ensure
    (set-buffer buf)
    (switch-to-buffer buf)
    ;; eglot-ensure connects at the end of the current command.
    (run-hooks 'post-command-hook)
    (parlance-eglot-test--check "the file is in text-mode" (eq major-mode 'text-mode) major-mode)
    (parlance-eglot-test--check "eglot connected and manages the buffer"
                                (and (eglot-current-server) eglot--managed-mode)
                                (format "server %S; messages %S" (eglot-current-server)
                                        parlance-eglot-test--messages))
    buf))

(defun parlance-eglot-test--capabilities (server)
  "Check the standard capabilities SERVER announced."
  (let ((caps (eglot--capabilities server)))
    (parlance-eglot-test--check
     "capabilities: textDocumentSync {openClose: true, change: 2}"
     (let ((sync (plist-get caps :textDocumentSync)))
       (and (eq (plist-get sync :openClose) t) (eql (plist-get sync :change) 2)))
     (format "%S" (plist-get caps :textDocumentSync)))
    (parlance-eglot-test--check
     "capabilities: codeActionProvider kinds [refactor.rewrite], resolveProvider"
     (let ((ca (plist-get caps :codeActionProvider)))
       (and (equal (append (plist-get ca :codeActionKinds) nil) '("refactor.rewrite"))
            (eq (plist-get ca :resolveProvider) t)))
     (format "%S" (plist-get caps :codeActionProvider)))
    (parlance-eglot-test--check
     "capabilities: executeCommandProvider [parlance.rewrite]"
     (equal (append (plist-get (plist-get caps :executeCommandProvider) :commands) nil)
            '("parlance.rewrite"))
     (format "%S" (plist-get caps :executeCommandProvider)))
    (parlance-eglot-test--check
     "capabilities: positionEncoding utf-16 (eglot 1.9 counts UTF-16 units)"
     (member (plist-get caps :positionEncoding) '(nil "utf-16"))
     (format "%S" (plist-get caps :positionEncoding)))))

(defun parlance-eglot-test--rewrite (buf)
  "Select the region in BUF, choose Rewrite: formal, wait for the server's edit."
  (with-current-buffer buf
    (princ "rewrite: select a region, M-x eglot-code-actions, pick \"Rewrite: formal\"\n")
    (let* ((original (buffer-string))
           (bounds (parlance-eglot-test--region-bounds))
           (prefix (buffer-substring-no-properties (point-min) (car bounds)))
           (region (buffer-substring-no-properties (car bounds) (cadr bounds)))
           (suffix (buffer-substring-no-properties (cadr bounds) (point-max)))
           (edits-before (length (parlance-eglot-test--requests-named 'workspace/applyEdit)))
           (shows-before (length (parlance-eglot-test--notifications-named 'window/showMessage))))
      (undo-boundary)
      ;; The model samples: when the checks refuse its rewrite, the server says
      ;; "could not rewrite ... try again" and changes nothing.  A user tries
      ;; again, and so does this test, up to three times.
      (let ((tries 0) items seconds err changed t0)
        (while (progn
                 (cl-incf tries)
                 (setq shows-before (length (parlance-eglot-test--notifications-named
                                             'window/showMessage)))
                 (parlance-eglot-test--select (car bounds) (cadr bounds))
                 (pcase-setq `(,items ,seconds ,err) (parlance-eglot-test--menu "Rewrite: formal"))
                 (setq t0 (float-time)
                       changed (parlance-eglot-test--wait
                                (lambda ()
                                  (or (not (equal (buffer-string) original))
                                      (> (length (parlance-eglot-test--notifications-named
                                                  'window/showMessage))
                                         shows-before)))))
                 (and (< tries 3) (null err) (equal (buffer-string) original)
                      (let ((shown (car (parlance-eglot-test--notifications-named 'window/showMessage))))
                        (and shown (string-match-p "could not rewrite" (format "%S" shown))
                             (princ (format "        (try %d refused: %S; trying again)\n" tries shown)))))))
        (parlance-eglot-test--check-menu items "rewrite")
        (parlance-eglot-test--check
         "codeAction + executeCommand answered without error (eglot gives up on a request after 10 s)"
         (null err) (format "%S after %.1f s" err seconds))
        (princ (format "        (menu and executeCommand took %.2f s)\n" seconds))
        (let* ((new (buffer-substring-no-properties (point-min) (point-max)))
               (edits (parlance-eglot-test--requests-named 'workspace/applyEdit)))
          (princ (format "        (the edit arrived %.1f s after executeCommand returned)\n"
                         (- (float-time) t0)))
          (parlance-eglot-test--check
           "the server's workspace/applyEdit changed the buffer (no showMessage instead)"
           (and changed (not (equal new original)) (> (length edits) edits-before))
           (format "edits %S; showMessage %S; messages %S"
                   (seq-take edits 1)
                   (parlance-eglot-test--notifications-named 'window/showMessage)
                   (seq-take parlance-eglot-test--messages 5)))
          (when (> (length edits) edits-before)
            (let* ((edit (plist-get (nth 1 (car edits)) :edit))
                   (outcome (nth 2 (car edits)))
                   (doc-changes (plist-get edit :documentChanges)))
              (parlance-eglot-test--check
               "the edit uses documentChanges with the buffer's version (eglot declares documentChanges)"
               (and (vectorp doc-changes) (= (length doc-changes) 1)
                    (integerp (plist-get (plist-get (aref doc-changes 0) :textDocument) :version)))
               (format "%S" edit))
              (parlance-eglot-test--check
               "eglot applied it and answered {applied: true}"
               (equal outcome '(:result (:applied t)))
               (format "%S" outcome))))
          (parlance-eglot-test--check
           "text before the region is unchanged, byte for byte"
           (string-prefix-p prefix new)
           (format "before: %S\nnow:    %S" prefix (substring new 0 (min (length new) (length prefix)))))
          (parlance-eglot-test--check
           "text after the region is unchanged, byte for byte"
           (string-suffix-p suffix new)
           (format "after: %S\nnow:   %S" suffix
                   (substring new (max 0 (- (length new) (length suffix))))))
          (let ((middle (and (string-prefix-p prefix new) (string-suffix-p suffix new)
                             (>= (length new) (+ (length prefix) (length suffix)))
                             (substring new (length prefix) (- (length new) (length suffix))))))
            (princ (format "        region:    %S\n        rewritten: %S\n" region middle))
            (parlance-eglot-test--check
             "the region was replaced by non-empty, different text"
             (and middle (string-match-p "[[:alnum:]]" middle) (not (equal middle region)))
             (format "%S" middle)))
          (parlance-eglot-test--idle)
          ;; eglot amalgamates an applied edit into one undo step.
          (deactivate-mark)
          (let ((last-command nil)) (ignore-errors (undo)))
          (parlance-eglot-test--check "one undo restores the original text"
                                      (equal (buffer-string) original)
                                      (buffer-string))
          (unless (equal (buffer-string) original)
            (erase-buffer) (insert original))
          (parlance-eglot-test--idle))))))

(defun parlance-eglot-test--stale (buf)
  "Choose a rewrite in BUF, edit another line before the edit: nothing applied."
  (with-current-buffer buf
    ;; C-u M-x eglot-code-actions asks for the kind and sends context.only;
    ;; eglot 1.9's `eglot-code-action-rewrite' only returns the actions
    ;; (it omits the INTERACTIVE argument), so a user cannot use it.
    (princ (concat "stale: C-u M-x eglot-code-actions, kind refactor.rewrite, "
                   "pick \"Rewrite: diplomatic\", then edit another line\n"))
    (let* ((bounds (parlance-eglot-test--region-bounds))
           (edits-before (length (parlance-eglot-test--requests-named 'workspace/applyEdit)))
           (shows-before (length (parlance-eglot-test--notifications-named 'window/showMessage)))
           (messages-before (length parlance-eglot-test--messages))
           expected)
      (parlance-eglot-test--select (car bounds) (cadr bounds))
      (pcase-let ((`(,items ,seconds ,err)
                   (parlance-eglot-test--menu "Rewrite: diplomatic" "refactor.rewrite")))
        ;; executeCommand has returned; the model is working.  The user types
        ;; on another line ("Thanks," → "Thanks again,") and Emacs goes idle.
        (parlance-eglot-test--check
         "no edit arrived before executeCommand returned (the stale case can be staged)"
         (= (length (parlance-eglot-test--requests-named 'workspace/applyEdit)) edits-before)
         (format "%S" (car (parlance-eglot-test--requests-named 'workspace/applyEdit))))
        (deactivate-mark)
        (save-excursion
          (goto-char (point-min))
          (search-forward "Thanks")
          (insert " again"))
        (parlance-eglot-test--idle)
        (setq expected (buffer-string))
        (parlance-eglot-test--check-menu items "stale")
        (parlance-eglot-test--check
         "codeAction (only refactor.rewrite) + executeCommand answered without error"
         (null err) (format "%S after %.1f s" err seconds))
        (let* ((t0 (float-time))
               (shown (lambda ()
                        (cl-find-if (lambda (m) (string-match-p "text changed" m))
                                    (seq-take parlance-eglot-test--messages
                                              (- (length parlance-eglot-test--messages)
                                                 messages-before)))))
               (event (parlance-eglot-test--wait
                       (lambda ()
                         (or (funcall shown)
                             (not (equal (buffer-string) expected))
                             (> (length (parlance-eglot-test--requests-named
                                         'workspace/applyEdit))
                                edits-before))))))
          (princ (format "        (an answer came %.1f s after the edit)\n" (- (float-time) t0)))
          (let ((shows (seq-take (parlance-eglot-test--notifications-named 'window/showMessage)
                                 (- (length (parlance-eglot-test--notifications-named
                                             'window/showMessage))
                                    shows-before))))
            (parlance-eglot-test--check
             "the server sent window/showMessage (type 2) saying the text \"changed\""
             (and event (funcall shown)
                  (cl-some (lambda (n) (and (eql (plist-get (nth 1 n) :type) 2)
                                            (string-match-p "text changed" (plist-get (nth 1 n) :message))))
                           shows))
             (format "showMessage %S; messages %S" shows
                     (seq-take parlance-eglot-test--messages 5)))
            (when (funcall shown)
              (princ (format "        eglot showed: %s\n" (funcall shown)))))
          ;; A request after the notice: anything the server sent before its
          ;; answer has been handled by the time the answer is back.
          (let ((barrier (condition-case e
                             (eglot-code-actions (car bounds) (cadr bounds))
                           (error e))))
            (parlance-eglot-test--check "a later codeAction request is answered"
                                        (and (listp barrier) (not (eq (car-safe barrier) 'error)))
                                        (format "%S" barrier)))
          (parlance-eglot-test--check
           "the server sent no workspace/applyEdit"
           (= (length (parlance-eglot-test--requests-named 'workspace/applyEdit)) edits-before)
           (format "%S" (car (parlance-eglot-test--requests-named 'workspace/applyEdit))))
          (parlance-eglot-test--check
           "the buffer is exactly the user's edited text"
           (equal (buffer-string) expected)
           (format "expected %S\ngot      %S" expected (buffer-string))))))))

;;; Runner

(defun parlance-eglot-test--save-logs ()
  "Write eglot's events and stderr buffers to the artifacts directory."
  (dolist (buf (buffer-list))
    (let ((name (buffer-name buf)))
      (when (string-match "\\`\\*EGLOT.*\\(events\\|stderr\\)\\*\\'" name)
        (let ((file (expand-file-name (format "eglot-%s.log" (match-string 1 name))
                                      parlance-eglot-test--artifacts))
              (coding-system-for-write 'utf-8-unix))
          (with-current-buffer buf
            (write-region nil nil file nil 'silent)))))))

(defun parlance-eglot-test-setup (program)
  "Configure Emacs as a user of PROGRAM (the Parlance daemon) with eglot would."
  (transient-mark-mode 1)
  (setq eglot-confirm-server-initiated-edits nil  ; apply the server's edit without asking
        eglot-sync-connect t                      ; M-x eglot waits for the handshake
        eglot-connect-timeout 120
        eglot-autoreconnect nil)
  (let ((log (getenv "PARLANCE_EGLOT_DAEMON_LOG")))
    (add-to-list 'eglot-server-programs
                 `((text-mode markdown-mode message-mode)
                   . (,program "--stdio"
                               ,@(when log (list "--log-level" "debug" "--log-file" log))
                               :initializationOptions
                               (:tones ["formal" "casual" "diplomatic" "empathetic" "direct"]
                                       :audience "peer" :language "en" :maxTokens 300)))))
  ;; Sent as workspace/didChangeConfiguration {settings: {parlance: {...}}} on connect.
  (setq-default eglot-workspace-configuration '(:parlance (:audience "peer")))
  (add-hook 'text-mode-hook #'eglot-ensure)
  (advice-add 'eglot-handle-request :around #'parlance-eglot-test--record-request)
  (advice-add 'eglot-handle-notification :before #'parlance-eglot-test--record-notification)
  (advice-add 'eglot--message :before #'parlance-eglot-test--record-message))

(defun parlance-eglot-test-run ()
  "Run the scenarios in order; print results; exit non-zero on failure."
  (let ((program (getenv "PARLANCE_BIN"))
        (dir (make-temp-file "parlance-eglot" t))
        server)
    (princ (format "Emacs %s; eglot from %s; jsonrpc from %s\n" emacs-version
                   (file-name-directory (locate-library "eglot"))
                   (file-name-directory (locate-library "jsonrpc"))))
    (when (getenv "PARLANCE_EGLOT_DRY_RUN")
      (princ "dry run: test.el and eglot loaded\n")
      (kill-emacs (if (and (fboundp 'eglot-code-actions) (fboundp 'eglot--apply-workspace-edit)
                           (fboundp 'eglot-execute-command))
                      0 1)))
    (unless (and program (file-executable-p program))
      (princ (format "no daemon at PARLANCE_BIN=%S\n" program))
      (kill-emacs 2))
    (parlance-eglot-test-setup program)
    (let ((file (expand-file-name "notes.txt" dir)))
      (with-temp-file file (insert parlance-eglot-test--text))
      (condition-case err
          (let ((buf (parlance-eglot-test--connect file)))
            (setq server (with-current-buffer buf (eglot-current-server))
                  parlance-eglot-test--server server)
            (when server
              (parlance-eglot-test--capabilities server)
              (parlance-eglot-test--rewrite buf)
              (parlance-eglot-test--stale buf)
              (parlance-eglot-test--check "the server is still running at the end"
                                          (jsonrpc-running-p server))))
        (error (parlance-eglot-test--check "no unexpected error" nil (format "%S" err))))
      (parlance-eglot-test--save-logs)
      (when server (ignore-errors (eglot-shutdown server)))
      (delete-directory dir t)
      (princ (format "%d passed, %d failed\n" parlance-eglot-test--passed
                     (length parlance-eglot-test--failed)))
      (kill-emacs (if parlance-eglot-test--failed 1 0)))))

(provide 'parlance-eglot-test)
;;; test.el ends here
