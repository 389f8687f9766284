Option Explicit
Sub Main()
    MsgBox "hello"
    MsgBox "bye"
End Sub
