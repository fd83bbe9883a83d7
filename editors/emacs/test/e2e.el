;;; e2e.el --- Eglot + dsh-lsp end-to-end test (Emacs 30, batch)  -*- lexical-binding: t -*-
;; Run by e2e.sh: emacs -Q --batch -l e2e.el
;; Env: DSH_LSP_BIN, DSH_STORE (a COPY of testdata/fixtures/store-raw), DSH_EXPECTED
;; (store-raw.expected.json), DSH_EL_DIR (editors/emacs), DSH_WORK.  Prints `N passed, M failed'.
(require 'cl-lib)
(require 'json)

(defvar e2e-start (float-time))
(defvar e2e-failed 0)
(defvar e2e-passed 0)
(defun e2e-log (fmt &rest args)
  (princ (format "emacs %6dms %s\n" (round (* 1000 (- (float-time) e2e-start))) (apply #'format fmt args))))
(defun e2e-check (ok what &optional detail)
  (if ok (setq e2e-passed (1+ e2e-passed)) (setq e2e-failed (1+ e2e-failed)))
  (e2e-log "%s %s%s" (if ok "PASS" "FAIL") what (if (and (not ok) detail) (format "\n      %s" detail) ""))
  ok)
(defun e2e-equal (got want what)
  (e2e-check (equal got want) what (format "got:  %S\n      want: %S" got want)))
(defun e2e-wait (pred secs)
  "Spin the event loop until PRED is non-nil or SECS elapse."
  (let ((end (+ (float-time) secs)))
    (while (and (not (funcall pred)) (< (float-time) end))
      (accept-process-output nil 0.02))
    (funcall pred)))
(defun e2e-env (name)
  (let ((v (getenv name)))
    (unless (and v (not (string-empty-p v))) (error "%s is not set" name))
    v))

(defconst e2e-bin (e2e-env "DSH_LSP_BIN"))
(defconst e2e-store (e2e-env "DSH_STORE"))
(defconst e2e-work (file-name-as-directory (e2e-env "DSH_WORK")))
(defconst e2e-A "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0001")
(defconst e2e-E "0b6f8a4e-2d51-4c8e-9f0a-5d3c2b1a0005")
(defconst e2e-proj "/home/alice/proj")

(defun e2e-cli (&rest args)
  "Run dsh-lsp ARGS and parse its JSON output (objects as plists, arrays as lists)."
  (with-temp-buffer
    (let ((rc (apply #'call-process e2e-bin nil (list t nil) nil args)))
      (unless (eq rc 0) (error "dsh-lsp %S failed: %s" args (buffer-string)))
      (goto-char (point-min))
      (json-parse-buffer :object-type 'plist :array-type 'list))))

(defun e2e-find (list id)
  (cl-find-if (lambda (c) (equal (plist-get c :sessionId) id)) list))

;; reference values: expected.json (byte-exact prompt) and the CLI (canonical mention, order)
(defconst e2e-expected-prompt
  (let* ((exp (with-temp-buffer
                (insert-file-contents (e2e-env "DSH_EXPECTED"))
                (json-parse-buffer :object-type 'plist :array-type 'list)))
         (sess (cl-find-if (lambda (s) (equal (plist-get (plist-get s :header) :id) e2e-A))
                           (plist-get exp :sessions))))
    (plist-get (cl-find-if (lambda (r) (eql (plist-get r :maxReferenceBytes) 65536))
                           (plist-get sess :references))
               :prompt)))
(defconst e2e-cands (e2e-cli "candidates" "--sessions" e2e-store "--target-cwd" e2e-proj))
(defconst e2e-mention-a (plist-get (e2e-find e2e-cands e2e-A) :mention))
(defconst e2e-mention-e (plist-get (e2e-find e2e-cands e2e-E) :mention))
(defconst e2e-label-a (plist-get (e2e-find e2e-cands e2e-A) :label))

;; the shipped configuration file
(add-to-list 'load-path (e2e-env "DSH_EL_DIR"))
(require 'dsh-lsp)
(require 'flymake)
(setq dsh-lsp-program e2e-bin
      dsh-lsp-sessions-dir e2e-store
      dsh-lsp-target (list :cwd e2e-proj)
      eglot-events-buffer-config '(:size 0)
      eglot-send-changes-idle-time 0.05)

(defun e2e-dsh-diags (code)
  (cl-remove-if-not
   (lambda (d)
     (let ((lsp (alist-get 'eglot-lsp-diag (flymake-diagnostic-data d))))
       (equal (plist-get lsp :code) code)))
   (flymake-diagnostics)))

(defun e2e-set-text (text)
  (erase-buffer)
  (insert text)
  (eglot--signal-textDocument/didChange))

;; Flymake drops overlays of edited text by itself, so "cleared" is judged on what the server
;; published: count and content of the last textDocument/publishDiagnostics.
(defvar e2e-publish-count 0)
(defvar e2e-published nil)
(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest params)
              (when (eq method 'textDocument/publishDiagnostics)
                (setq e2e-publish-count (1+ e2e-publish-count)
                      e2e-published (append (plist-get params :diagnostics) nil)))))
(defun e2e-published-codes ()
  (mapcar (lambda (d) (plist-get d :code)) e2e-published))

(defun e2e-diag-cycle (text code fixed what)
  (e2e-set-text text)
  (e2e-check (e2e-wait (lambda () (and (e2e-dsh-diags code) (member code (e2e-published-codes)))) 5)
             (format "%s: %s diagnostic appears (published and in flymake)" what code)
             (format "%S / %S" (mapcar #'flymake-diagnostic-text (flymake-diagnostics)) e2e-published))
  (let ((before e2e-publish-count))
    (e2e-set-text fixed)
    (e2e-check (e2e-wait (lambda () (and (> e2e-publish-count before) (null e2e-published)
                                         (null (flymake-diagnostics))))
                         5)
               (format "%s: diagnostics clear after the fix (empty publish)" what)
               (format "%S / %S" (mapcar #'flymake-diagnostic-text (flymake-diagnostics)) e2e-published))))

(let* ((file (expand-file-name "prompt.dshchat" e2e-work)))
  (with-temp-file file (insert "see "))
  (find-file file)
  (e2e-check (eq major-mode 'dsh-chat-mode) (format "*.dshchat opens in dsh-chat-mode (%s)" major-mode))
  ;; eglot-ensure runs from post-command-hook, which never runs in --batch: start it the way
  ;; M-x eglot does, from the contact that dsh-lsp.el registered.
  (apply #'eglot (eglot--guess-contact))
  (e2e-check (e2e-wait (lambda () (eglot-managed-p)) 10) "Eglot manages the buffer")
  (let* ((srv (eglot-current-server))
         (caps (eglot--capabilities srv)))
    (e2e-check (seq-contains-p (plist-get (plist-get caps :completionProvider) :triggerCharacters) "@")
               "server triggerCharacters contain @")

    ;; completion: type "@" at the end and complete like completion-at-point does
    (goto-char (point-max))
    (insert "@")
    (eglot--signal-textDocument/didChange)
    (let* ((capf (eglot-completion-at-point))
           (beg (nth 0 capf)) (end (nth 1 capf)) (table (nth 2 capf))
           (props (nthcdr 3 capf))
           (cands (and capf (all-completions (buffer-substring beg end) table)))
           (md (and capf (completion-metadata (buffer-substring beg end) table nil)))
           (sortf (completion-metadata-get md 'display-sort-function))
           (sorted (if sortf (funcall sortf (copy-sequence cands)) cands))
           (shown (mapcar (lambda (c) (plist-get (get-text-property 0 'eglot--lsp-item c) :label)) sorted))
           (want (mapcar (lambda (c) (plist-get c :label)) e2e-cands))
           (pick (cl-find-if (lambda (c) (equal (plist-get (get-text-property 0 'eglot--lsp-item c) :label)
                                                e2e-label-a))
                             sorted)))
      (e2e-equal shown want "completion lists the candidates in dsh order")
      (when (e2e-check pick (format "completion offers %s" e2e-label-a) (format "%S" sorted))
        ;; accept: replace the completed region with the candidate, then the exit function
        ;; applies the item's textEdit/insertText
        (delete-region beg end)
        (goto-char beg)
        (insert pick)
        (funcall (plist-get props :exit-function) pick 'finished)
        (e2e-equal (buffer-substring-no-properties (point-min) (point-max)) (concat "see " e2e-mention-a)
                   "accepting inserts exactly the canonical mention")))

    ;; diagnostics appear and clear; then the buffer's own target makes E a self reference
    (e2e-diag-cycle "café 🙂 see @[x](dsh-session:not-canonical) ok" "invalid-uri"
                    (concat "café 🙂 see " e2e-mention-a " ok") "eglot")
    (dsh-lsp-set-target (list :sessionId e2e-E :cwd e2e-proj))
    (e2e-diag-cycle (concat "compare " e2e-mention-e) "self-reference"
                    (concat "compare " e2e-mention-a) "eglot dsh/setTarget")

    ;; prepare: the shipped command (register), and workspace/executeCommand dsh.prepare
    (e2e-set-text (concat "see " e2e-mention-a))
    (set-register ?d "old")
    (let ((res (dsh-lsp-prepare)))
      (e2e-equal (plist-get res :content) (concat "see @" e2e-label-a) "dsh-lsp-prepare: readable text")
      (e2e-check (equal (get-register ?d) e2e-expected-prompt)
                 "dsh-lsp-prepare: register d holds the exact context message (expected.json, budget 65536)"
                 (substring (or (get-register ?d) "") 0 (min 200 (length (or (get-register ?d) "")))))
      (e2e-check (with-current-buffer "*dsh-prepared*"
                   (string-search e2e-expected-prompt (buffer-string)))
                 "dsh-lsp-prepare: *dsh-prepared* shows the context"))
    (let ((res (jsonrpc-request srv :workspace/executeCommand
                                `(:command "dsh.prepare"
                                  :arguments [(:textDocument ,(eglot--TextDocumentIdentifier))]))))
      (e2e-check (equal (dsh-lsp-context-text res) e2e-expected-prompt)
                 "workspace/executeCommand dsh.prepare: exact context message"
                 (format "%S" res)))
    (set-buffer-modified-p nil)
    (eglot-shutdown srv)))

(princ (format "emacs: %d passed, %d failed\n" e2e-passed e2e-failed))
(kill-emacs (if (= e2e-failed 0) 0 1))
